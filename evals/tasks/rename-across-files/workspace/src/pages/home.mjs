// The home page header.
import { getUserName } from "../users.mjs";

export function homeHeader(user) {
  return "Home · " + getUserName(user);
}
