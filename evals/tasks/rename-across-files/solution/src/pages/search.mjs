// The search page header.
import { displayName } from "../users.mjs";

export function searchHeader(user) {
  return "Search · " + displayName(user);
}
