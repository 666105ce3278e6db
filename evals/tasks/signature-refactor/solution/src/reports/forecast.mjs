// The forecast report line.
import { formatPrice } from "../format.mjs";

export function forecastLine(total) {
  const net = total * 1.9;
  return "forecast: " + formatPrice({ amount: net, currency: "USD" });
}
