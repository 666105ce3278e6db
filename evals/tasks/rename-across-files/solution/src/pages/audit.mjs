// The audit page header.
import { displayName } from "../users.mjs";

export function auditHeader(user) {
  return "Audit · " + displayName(user);
}
