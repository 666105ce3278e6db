// Numbers as people read them, in every text Loom prints: counts with thousands separators ("19,200"), fractions at a
// fixed precision (never "0.005618000000000001"), a noun that agrees with its count ("1 task", "2 tasks"), sizes
// ("1.5 KiB"), durations ("2.35 s") and ratios ("1.12×").

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

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(2)} MiB`;
}

export function formatMs(ms: number): string {
  if (ms > 0 && ms < 10) return `${ms.toFixed(1)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(2)} s`;
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)}m ${String(seconds % 60).padStart(2, "0")}s`;
}

export function formatRatio(r: number | null): string {
  if (r === null) return "";
  return `${r >= 0.1 || r === 0 ? r.toFixed(2) : r.toPrecision(2)}×`;
}
