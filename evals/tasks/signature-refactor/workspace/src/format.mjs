// formatPrice(amount, currency) -> "12.50 EUR".
export function formatPrice(amount, currency) {
  return `${amount.toFixed(2)} ${currency}`;
}
