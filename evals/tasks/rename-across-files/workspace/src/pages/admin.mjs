// The admin page header.
import { getUserName } from "../users.mjs";

export function adminHeader(user) {
  return "Admin · " + getUserName(user);
}
