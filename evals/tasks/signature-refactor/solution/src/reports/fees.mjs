// The fees report line.
import { formatPrice } from "../format.mjs";

export function feesLine(total) {
  const net = total * 1.6;
  return "fees: " + formatPrice({ amount: net, currency: "GBP" });
}
