// The taxes report line.
import { formatPrice } from "../format.mjs";

export function taxesLine(total) {
  const net = total * 1.7;
  return "taxes: " + formatPrice(net, "CHF");
}
