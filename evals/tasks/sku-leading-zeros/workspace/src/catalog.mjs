// Prices by SKU from data/catalog.json. SKUs are codes, not numbers: "04512" and "4512" are different parts.
import { readFileSync } from "node:fs";

export function loadCatalog(path = "data/catalog.json") {
  const index = new Map();
  for (const product of JSON.parse(readFileSync(path, "utf8")).products) index.set(Number(product.sku), product);
  return { priceOf: (sku) => index.get(Number(sku))?.price ?? null };
}
