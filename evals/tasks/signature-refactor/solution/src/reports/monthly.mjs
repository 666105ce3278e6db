// The monthly report line.
import { formatPrice } from "../format.mjs";

export function monthlyLine(total) {
  const net = total * 1.2;
  return "monthly: " + formatPrice({ amount: net, currency: "GBP" });
}
