// The payouts report line.
import { formatPrice } from "../format.mjs";

export function payoutsLine(total) {
  const net = total * 1.8;
  return "payouts: " + formatPrice({ amount: net, currency: "EUR" });
}
