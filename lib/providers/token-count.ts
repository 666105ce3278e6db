/** A reported token counter, or null when the provider did not report one (absent, null, or not a count). */
export function tokenCount(value: unknown): number | null {
  return typeof value === "number" && Number.isInteger(value) && value >= 0 ? value : null;
}
