import { check, done } from "./harness.mjs";
import { displayName } from "./src/users.mjs";
import { homeHeader } from "./src/pages/home.mjs";
const ada = { first: "Ada", last: "Lovelace" };
check("displayName", displayName(ada), "Ada Lovelace");
check("home header", homeHeader(ada), "Home · Ada Lovelace");
done();
