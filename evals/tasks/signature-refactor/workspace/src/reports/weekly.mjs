// The weekly report line.
import { formatPrice } from "../format.mjs";

export function weeklyLine(total) {
  const net = total * 1.1;
  return "weekly: " + formatPrice(net, "USD");
}
