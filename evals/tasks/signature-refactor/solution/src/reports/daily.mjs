// The daily report line.
import { formatPrice } from "../format.mjs";

export function dailyLine(total) {
  const net = total * 1.0;
  return "daily: " + formatPrice({ amount: net, currency: "EUR" });
}
