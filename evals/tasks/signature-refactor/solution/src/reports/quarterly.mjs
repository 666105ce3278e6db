// The quarterly report line.
import { formatPrice } from "../format.mjs";

export function quarterlyLine(total) {
  const net = total * 1.3;
  return "quarterly: " + formatPrice({ amount: net, currency: "CHF" });
}
