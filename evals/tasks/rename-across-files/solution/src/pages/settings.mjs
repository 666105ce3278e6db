// The settings page header.
import { displayName } from "../users.mjs";

export function settingsHeader(user) {
  return "Settings · " + displayName(user);
}
