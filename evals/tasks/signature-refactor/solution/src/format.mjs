// formatPrice({ amount, currency }) -> "12.50 EUR".
export function formatPrice({ amount, currency }) {
  if (typeof amount !== "number" || typeof currency !== "string") throw new TypeError("formatPrice({ amount, currency })");
  return `${amount.toFixed(2)} ${currency}`;
}
