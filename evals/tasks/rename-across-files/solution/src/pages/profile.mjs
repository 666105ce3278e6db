// The profile page header.
import { displayName } from "../users.mjs";

export function profileHeader(user) {
  return "Profile · " + displayName(user);
}
