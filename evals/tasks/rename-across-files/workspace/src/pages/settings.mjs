// The settings page header.
import { getUserName } from "../users.mjs";

export function settingsHeader(user) {
  return "Settings · " + getUserName(user);
}
