// The admin page header.
import { displayName } from "../users.mjs";

export function adminHeader(user) {
  return "Admin · " + displayName(user);
}
