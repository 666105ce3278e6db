// The inbox page header.
import { getUserName } from "../users.mjs";

export function inboxHeader(user) {
  return "Inbox · " + getUserName(user);
}
