// The invoices page header.
import { getUserName } from "../users.mjs";

export function invoicesHeader(user) {
  return "Invoices · " + getUserName(user);
}
