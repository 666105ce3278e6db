// Numbers as people read them, in every text Loom prints: counts with thousands separators ("19,200"), fractions at a
// fixed precision (never "0.005618000000000001"), and a noun that agrees with its count ("1 task", "2 tasks").

/** "19,200"; a fraction at two decimals ("0.01", "1,234.50"). */
export function formatCount(n: number): string {
  // split always yields at least one part
  const [int = "", frac] = (Number.isInteger(n) ? String(n) : n.toFixed(2)).split(".");
  const grouped = int.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return frac === undefined ? grouped : `${grouped}.${frac}`;
}

/** "1 recording", "2 recordings", "1,024 request bytes"; `many` for an irregular plural. */
export function plural(count: number, noun: string, many = `${noun}s`): string {
  return `${formatCount(count)} ${count === 1 ? noun : many}`;
}

/**
 * A list of numbers as a line can hold it: "step 4", "steps 1, 2 and 3", "steps 1, 2, 3 and 3,509 more" — at most
 * `max` named, the rest counted (a 3,512-step list would be a 20 KB line).
 */
export function someSteps(steps: readonly number[], { max = 3 }: { max?: number } = {}): string {
  const named = steps.slice(0, max).map(formatCount);
  const rest = steps.length - named.length;
  const noun = steps.length === 1 ? "step" : "steps";
  if (rest > 0) return `${noun} ${named.join(", ")} and ${formatCount(rest)} more`;
  if (named.length <= 1) return `${noun} ${named.join("")}`;
  return `${noun} ${named.slice(0, -1).join(", ")} and ${named.at(-1)}`;
}
