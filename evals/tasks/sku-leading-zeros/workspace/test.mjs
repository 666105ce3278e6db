import { check, done } from "./harness.mjs";
import { loadCatalog } from "./src/catalog.mjs";
const { priceOf } = loadCatalog();
check("priceOf('4512')", priceOf("4512"), 0.9);
check("priceOf('04512')", priceOf("04512"), 0.35);
done();
