// The home page header.
import { displayName } from "../users.mjs";

export function homeHeader(user) {
  return "Home · " + displayName(user);
}
