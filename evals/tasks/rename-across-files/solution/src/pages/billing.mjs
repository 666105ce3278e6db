// The billing page header.
import { displayName } from "../users.mjs";

export function billingHeader(user) {
  return "Billing · " + displayName(user);
}
