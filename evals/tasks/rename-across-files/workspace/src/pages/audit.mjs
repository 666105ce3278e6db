// The audit page header.
import { getUserName } from "../users.mjs";

export function auditHeader(user) {
  return "Audit · " + getUserName(user);
}
