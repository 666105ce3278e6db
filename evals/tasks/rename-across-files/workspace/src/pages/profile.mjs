// The profile page header.
import { getUserName } from "../users.mjs";

export function profileHeader(user) {
  return "Profile · " + getUserName(user);
}
