// The refunds report line.
import { formatPrice } from "../format.mjs";

export function refundsLine(total) {
  const net = total * 1.5;
  return "refunds: " + formatPrice({ amount: net, currency: "USD" });
}
