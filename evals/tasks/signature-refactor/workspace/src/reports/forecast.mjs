// The forecast report line.
import { formatPrice } from "../format.mjs";

export function forecastLine(total) {
  const net = total * 1.9;
  return "forecast: " + formatPrice(net, "USD");
}
