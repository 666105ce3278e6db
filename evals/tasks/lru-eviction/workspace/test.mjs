import { check, done } from "./harness.mjs";
import { LruCache } from "./src/lru.mjs";
const cache = new LruCache(2);
cache.set("a", 1);
cache.set("b", 2);
cache.set("c", 3);
check("evicts the oldest", cache.keys(), ["b", "c"]);
done();
