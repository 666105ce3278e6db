// The search page header.
import { getUserName } from "../users.mjs";

export function searchHeader(user) {
  return "Search · " + getUserName(user);
}
