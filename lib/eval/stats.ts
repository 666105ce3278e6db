// Statistics for clustered, paired binary outcomes (docs/eval.md gives every formula): intervals over tasks, a paired
// sign-flip permutation test, McNemar's exact test, a task-resampling bootstrap and the smallest detectable
// difference. Pure and seeded: the same rows give the same numbers on every machine.
import { seededRandom } from "./matrix.ts";

export const mean = (xs: readonly number[]): number => xs.reduce((s, x) => s + x, 0) / xs.length;

/** Sample variance (n − 1); 0 for fewer than two values. */
export function variance(xs: readonly number[]): number {
  if (xs.length < 2) return 0;
  const m = mean(xs);
  return xs.reduce((s, x) => s + (x - m) ** 2, 0) / (xs.length - 1);
}

export function median(xs: readonly number[]): number | null {
  if (xs.length === 0) return null;
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** The standard normal quantile (Acklam's rational approximation, relative error < 1.2e-9). */
export function normalQuantile(p: number): number {
  const a = [
    -39.69683028665376,
    220.9460984245205,
    -275.9285104469687,
    138.357751867269,
    -30.66479806614716,
    2.506628277459239,
  ];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [
    -0.007784894002430293,
    -0.3223964580411365,
    -2.400758277161838,
    -2.549732539343734,
    4.374664141464968,
    2.938163982698783,
  ];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const low = 0.02425;
  if (p < low) {
    const q = Math.sqrt(-2 * Math.log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
      ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  if (p > 1 - low) return -normalQuantile(1 - p);
  const q = p - 0.5;
  const r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
    (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

/**
 * Student's t quantile: exact for 1 and 2 degrees of freedom, else the Cornish–Fisher expansion around the normal
 * quantile (Abramowitz & Stegun 26.7.5; error below 1e-3 from 3 degrees of freedom on at the 97.5 % point).
 */
export function tQuantile(p: number, df: number): number {
  if (df === 1) return Math.tan(Math.PI * (p - 0.5));
  if (df === 2) return (2 * p - 1) / Math.sqrt(2 * p * (1 - p));
  const z = normalQuantile(p);
  const g1 = (z ** 3 + z) / 4;
  const g2 = (5 * z ** 5 + 16 * z ** 3 + 3 * z) / 96;
  const g3 = (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / 384;
  const g4 = (79 * z ** 9 + 776 * z ** 7 + 1482 * z ** 5 - 1920 * z ** 3 - 945 * z) / 92160;
  return z + g1 / df + g2 / df ** 2 + g3 / df ** 3 + g4 / df ** 4;
}

export type Interval = { estimate: number; low: number; high: number };

/**
 * The mean of per-cluster values with a 95 % t-interval (T − 1 degrees of freedom): with tasks as clusters, this is
 * the task-clustered interval. One cluster has no spread to measure: its interval is the whole `bounds`.
 */
export function meanInterval(
  values: readonly number[],
  { bounds = [-Infinity, Infinity] }: { bounds?: [number, number] } = {},
): Interval {
  const estimate = mean(values);
  if (values.length < 2) return { estimate, low: bounds[0], high: bounds[1] };
  const half = tQuantile(0.975, values.length - 1) * Math.sqrt(variance(values) / values.length);
  return { estimate, low: Math.max(bounds[0], estimate - half), high: Math.min(bounds[1], estimate + half) };
}

/** Patterns enumerated exactly up to this many; past it, this many seeded random patterns. */
const EXACT_PATTERNS = 2 ** 16;

/**
 * Two-sided paired sign-flip permutation test of mean(d) = 0: under the null each task's difference is as likely
 * negated. Exact over all 2^k sign patterns of the k non-zero differences while 2^k ≤ 2^16, else a seeded Monte Carlo
 * over 2^16 patterns with the (hits + 1) / (N + 1) estimate. 1 when every difference is zero.
 */
export function signFlipTest(differences: readonly number[], { seed = 1 }: { seed?: number } = {}): {
  p: number;
  exact: boolean;
} {
  const d = differences.filter((x) => x !== 0);
  if (d.length === 0) return { p: 1, exact: true };
  const observed = Math.abs(d.reduce((s, x) => s + x, 0));
  const tolerance = 1e-9 * (1 + observed);
  const total = 2 ** d.length;
  if (total <= EXACT_PATTERNS) {
    let hits = 0;
    for (let mask = 0; mask < total; mask++) {
      let sum = 0;
      for (let i = 0; i < d.length; i++) sum += mask & (1 << i) ? -d[i] : d[i];
      if (Math.abs(sum) >= observed - tolerance) hits++;
    }
    return { p: hits / total, exact: true };
  }
  const random = seededRandom(seed);
  let hits = 0;
  for (let n = 0; n < EXACT_PATTERNS; n++) {
    let sum = 0;
    for (const x of d) sum += random() < 0.5 ? -x : x;
    if (Math.abs(sum) >= observed - tolerance) hits++;
  }
  return { p: (hits + 1) / (EXACT_PATTERNS + 1), exact: false };
}

/** log of n choose k. */
function logChoose(n: number, k: number): number {
  let s = 0;
  for (let i = 1; i <= k; i++) s += Math.log(n - k + i) - Math.log(i);
  return s;
}

/** Exact two-sided McNemar test: b and c are the discordant pairs (A only, B only); binomial(b + c, 1/2). */
export function mcnemarExact(b: number, c: number): number {
  const n = b + c;
  if (n === 0) return 1;
  const k = Math.min(b, c);
  let tail = 0;
  for (let i = 0; i <= k; i++) tail += Math.exp(logChoose(n, i) - n * Math.LN2);
  return Math.min(1, 2 * tail);
}

/**
 * The ratio Σb / Σa with a percentile bootstrap 95 % interval that resamples whole tasks (seeded), so the interval
 * carries the clustering of runs within tasks. Null when there is no task with a cost, or a sum is zero.
 */
export function ratioBootstrap(
  pairs: readonly { a: number; b: number }[],
  { seed = 1, samples = 2000 }: { seed?: number; samples?: number } = {},
): Interval | null {
  const sumA = pairs.reduce((s, p) => s + p.a, 0);
  const sumB = pairs.reduce((s, p) => s + p.b, 0);
  if (pairs.length === 0 || sumA <= 0) return null;
  const random = seededRandom(seed);
  const ratios: number[] = [];
  for (let n = 0; n < samples; n++) {
    let a = 0;
    let b = 0;
    for (let i = 0; i < pairs.length; i++) {
      const pick = pairs[Math.floor(random() * pairs.length)];
      a += pick.a;
      b += pick.b;
    }
    if (a > 0) ratios.push(b / a);
  }
  ratios.sort((x, y) => x - y);
  const at = (q: number) => ratios[Math.min(ratios.length - 1, Math.max(0, Math.floor(q * ratios.length)))];
  return { estimate: sumB / sumA, low: at(0.025), high: at(0.975) };
}

/** exp(mean(log(b / a))) over pairs where both are positive; null when none is. */
export function geometricMeanRatio(pairs: readonly { a: number; b: number }[]): number | null {
  const logs = pairs.filter((p) => p.a > 0 && p.b > 0).map((p) => Math.log(p.b / p.a));
  return logs.length === 0 ? null : Math.exp(mean(logs));
}

/** z(0.975) + z(0.80): a two-sided 5 % test with 80 % power. */
const POWER_FACTOR = normalQuantile(0.975) + normalQuantile(0.8);

/**
 * The smallest true mean difference this design would detect (80 % power, 5 % level, normal approximation):
 * (z₀.₉₇₅ + z₀.₈₀) · √(σ²_d / T), where σ²_d, the variance of one task's difference, is the larger of the observed
 * between-task variance of d_t and the within-task variance implied by R repeats (Σ_p ŝ(1 − ŝ)/R averaged over
 * tasks), so that a run whose tasks happen to agree exactly still reports what its size could resolve.
 */
export function detectableDifference(
  { differences, within }: { differences: readonly number[]; within: number },
): number | null {
  if (differences.length === 0) return null;
  const sigma2 = Math.max(variance(differences), within);
  return POWER_FACTOR * Math.sqrt(sigma2 / differences.length);
}
