// The yearly report line.
import { formatPrice } from "../format.mjs";

export function yearlyLine(total) {
  const net = total * 1.4;
  return "yearly: " + formatPrice({ amount: net, currency: "EUR" });
}
