export const MAX_RETRIES = 3;

export function attemptsLeft(used) {
  return Math.max(0, MAX_RETRIES - used);
}
