// The invoices page header.
import { displayName } from "../users.mjs";

export function invoicesHeader(user) {
  return "Invoices · " + displayName(user);
}
