import { check, done, throws } from "./harness.mjs";
import { topoSort } from "./src/topo.mjs";
check("chain", topoSort({ a: ["b"], b: ["c"], c: [] }), ["c", "b", "a"]);
throws("two-node cycle", () => topoSort({ a: ["b"], b: ["a"] }), /cycle/);
done();
