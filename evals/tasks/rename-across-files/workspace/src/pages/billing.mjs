// The billing page header.
import { getUserName } from "../users.mjs";

export function billingHeader(user) {
  return "Billing · " + getUserName(user);
}
