import { check, done } from "./harness.mjs";
import { parseCsvLine } from "./src/csv.mjs";
check("quoted comma", parseCsvLine('a,"b,c",d'), ["a", "b,c", "d"]);
done();
