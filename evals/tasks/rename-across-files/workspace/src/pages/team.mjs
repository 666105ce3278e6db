// The team page header.
import { getUserName } from "../users.mjs";

export function teamHeader(user) {
  return "Team · " + getUserName(user);
}
