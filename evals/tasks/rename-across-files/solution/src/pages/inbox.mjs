// The inbox page header.
import { displayName } from "../users.mjs";

export function inboxHeader(user) {
  return "Inbox · " + displayName(user);
}
