// The team page header.
import { displayName } from "../users.mjs";

export function teamHeader(user) {
  return "Team · " + displayName(user);
}
