// Statistics for clustered, paired binary outcomes (docs/eval.md gives every formula): intervals over tasks, a paired
// sign-flip permutation test, McNemar's exact test, a task-resampling bootstrap and the smallest detectable
// difference. Pure and seeded: the same rows give the same numbers on every machine.
import { seededRandom } from "./matrix.ts";

export const mean = (xs: readonly number[]): number => xs.reduce((s, x) => s + x, 0) / xs.length;

export function median(xs: readonly number[]): number | null {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const upper = sorted[mid];
  if (upper === undefined) return null;
  const lower = sorted[mid - 1];
  return sorted.length % 2 || lower === undefined ? upper : (lower + upper) / 2;
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
    return horner(c, q) / horner([...d, 1], q);
  }
  if (p > 1 - low) return -normalQuantile(1 - p);
  const q = p - 0.5;
  const r = q * q;
  return horner(a, r) * q / horner([...b, 1], r);
}

/** The polynomial with these coefficients (highest power first) at x, by Horner's rule: ((c0·x + c1)·x + c2)… */
const horner = (coefficients: readonly number[], x: number): number => coefficients.reduce((s, c) => s * x + c, 0);

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

/** z(0.975): the two-sided 95 % normal quantile. */
const Z95 = normalQuantile(0.975);

/**
 * Wilson's score interval with continuity correction (Newcombe 1998, method 4) for a proportion p̂ observed on n
 * units (p̂·n need not be whole: with tasks as units and a per-task rate in [0, 1], it is the task-clustered
 * interval, valid whatever the repeats since a task's rate has variance ≤ p(1 − p)):
 * L = (2np̂ + z² − 1 − z√(z² − 2 − 1/n + 4p̂(nq̂ + 1))) / (2(n + z²)), U = (2np̂ + z² + 1 + z√(z² + 2 − 1/n +
 * 4p̂(nq̂ − 1))) / (2(n + z²)), L = 0 at p̂ = 0 and U = 1 at p̂ = 1. Never zero width: 0 of 12 is 0 to 26 %.
 */
export function wilsonInterval(estimate: number, n: number): Interval {
  if (n <= 0) return { estimate, low: 0, high: 1 };
  const z = Z95;
  const p = estimate;
  const q = 1 - p;
  const denominator = 2 * (n + z * z);
  const low = p <= 0
    ? 0
    : (2 * n * p + z * z - 1 - z * Math.sqrt(Math.max(0, z * z - 2 - 1 / n + 4 * p * (n * q + 1)))) / denominator;
  const high = p >= 1
    ? 1
    : (2 * n * p + z * z + 1 + z * Math.sqrt(Math.max(0, z * z + 2 - 1 / n + 4 * p * (n * q - 1)))) / denominator;
  return { estimate, low: Math.max(0, Math.min(low, p)), high: Math.min(1, Math.max(high, p)) };
}

/**
 * How many runs' worth of information T tasks' rates carry: p̂q̂ / (v⁺/T), held to [T, Σ runs], where v⁺ is an upper
 * 95 % bound of the between-task variance s² (T − 1 divisor): s² · (T − 1) / χ²_{0.05, T−1} (Wilson–Hilferty), so a
 * few tasks that happen to agree do not claim the precision of many runs. T when every rate is 0 or 1 or all agree.
 */
function effectiveRuns(rates: readonly number[], runs: number): number {
  const T = rates.length;
  if (T < 2) return T;
  const p = mean(rates);
  const k = T - 1;
  const s2 = rates.reduce((s, x) => s + (x - p) ** 2, 0) / k;
  const chi2 = k * (1 - 2 / (9 * k) + normalQuantile(0.05) * Math.sqrt(2 / (9 * k))) ** 3;
  const upper = chi2 > 0 ? (s2 * k) / chi2 : Infinity;
  if (!(upper > 0) || p <= 0 || p >= 1) return T;
  return Math.min(Math.max(T, runs), Math.max(T, (p * (1 - p)) / (upper / T)));
}

/** The task-clustered solve rate: the mean of the per-task rates, with Wilson's interval over the effective runs. */
export function solveRateInterval(rates: readonly number[], runs = rates.length): Interval {
  return rates.length === 0
    ? { estimate: 0, low: 0, high: 1 }
    : wilsonInterval(mean(rates), effectiveRuns(rates, runs));
}

/**
 * The paired difference mean(b) − mean(a) of per-task rates, with Newcombe's hybrid score interval (1998, method 11:
 * continuity-corrected Wilson components and correlation φ*), computed on the task means so that one formula serves
 * one repeat (where it is Newcombe's) and several (a MOVER interval over tasks, Zou & Donner 2008):
 * L = δ − √((p̂_B − l_B)² − 2φ*(p̂_B − l_B)(u_A − p̂_A) + (u_A − p̂_A)²), U likewise, with (l, u) the solve-rate intervals
 * (over the effective runs; `runsA`/`runsB` are the runs counted) and φ* = max(cov − 1/(2T), 0)/(s_A s_B) for a
 * positive covariance (0 when a variance is 0). The correction keeps the interval open when every task agrees: 2/4 vs
 * 2/4 on the same tasks is −41 to +41, not 0 to 0.
 */
export function pairedDifference(
  a: readonly number[],
  b: readonly number[],
  { runsA = a.length, runsB = b.length }: { runsA?: number; runsB?: number } = {},
): Interval & { correlation: number } {
  const T = a.length;
  if (T === 0) return { estimate: 0, low: -1, high: 1, correlation: 0 };
  const pa = mean(a);
  const pb = mean(b);
  const wa = wilsonInterval(pa, effectiveRuns(a, runsA));
  const wb = wilsonInterval(pb, effectiveRuns(b, runsB));
  let cov = 0;
  let va = 0;
  let vb = 0;
  for (const [i, x] of a.entries()) {
    const y = b[i];
    if (y === undefined) throw new Error(`pairedDifference: ${T} rates for A but ${b.length} for B; one per task each`);
    cov += (x - pa) * (y - pb) / T;
    va += (x - pa) ** 2 / T;
    vb += (y - pb) ** 2 / T;
  }
  const corrected = cov > 0 ? Math.max(cov - 1 / (2 * T), 0) : cov;
  const phi = va > 0 && vb > 0 ? Math.max(-1, Math.min(1, corrected / Math.sqrt(va * vb))) : 0;
  const delta = pb - pa;
  const spread = (x: number, y: number) => Math.sqrt(Math.max(0, x * x - 2 * phi * x * y + y * y));
  return {
    estimate: delta,
    low: Math.max(-1, delta - spread(pb - wb.low, wa.high - pa)),
    high: Math.min(1, delta + spread(wb.high - pb, pa - wa.low)),
    correlation: phi,
  };
}

/** Patterns enumerated exactly up to this many; past it, this many seeded random patterns. */
const EXACT_PATTERNS = 2 ** 16;
/** Differences on a lattice of step 1/q with q at most this are counted exactly, by convolution, for any k. */
const LATTICE_DENOMINATOR = 720;
const LATTICE_CELLS = 4_000_000;

/**
 * Two-sided paired sign-flip permutation test of mean(d) = 0: under the null each task's difference is as likely
 * negated. Exact: over all 2^k sign patterns of the k non-zero differences while 2^k ≤ 2^16, and for any k when the
 * differences are multiples of 1/q (rates of whole runs: q = the runs per task), by convolving the distribution of the
 * signed sum; else a seeded Monte Carlo over 2^16 patterns with the (hits + 1) / (N + 1) estimate. 1 when every
 * difference is zero.
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
      for (const [i, x] of d.entries()) sum += mask & (1 << i) ? -x : x;
      if (Math.abs(sum) >= observed - tolerance) hits++;
    }
    return { p: hits / total, exact: true };
  }
  const lattice = latticeSignFlip(d, observed);
  if (lattice !== null) return { p: lattice, exact: true };
  const random = seededRandom(seed);
  let hits = 0;
  for (let n = 0; n < EXACT_PATTERNS; n++) {
    let sum = 0;
    for (const x of d) sum += random() < 0.5 ? -x : x;
    if (Math.abs(sum) >= observed - tolerance) hits++;
  }
  return { p: (hits + 1) / (EXACT_PATTERNS + 1), exact: false };
}

/** The exact sign-flip p when every |d| is a whole multiple of 1/q for a small q; null when none fits. */
function latticeSignFlip(d: readonly number[], observed: number): number | null {
  for (let q = 1; q <= LATTICE_DENOMINATOR; q++) {
    if (!d.every((x) => Math.abs(Math.round(Math.abs(x) * q) - Math.abs(x) * q) < 1e-7)) continue;
    const steps = d.map((x) => Math.round(Math.abs(x) * q));
    const span = steps.reduce((s, k) => s + k, 0);
    if ((2 * span + 1) * d.length > LATTICE_CELLS) return null;
    // probability of each signed sum, offset by span (a Float64Array starts zero-filled: `?? 0` reads the same)
    let dist = new Float64Array(2 * span + 1);
    dist[span] = 1;
    let reach = 0;
    for (const k of steps) {
      const next = new Float64Array(2 * span + 1);
      for (let s = span - reach; s <= span + reach; s++) {
        const pr = dist[s] ?? 0;
        if (pr === 0) continue;
        next[s + k] = (next[s + k] ?? 0) + pr / 2;
        next[s - k] = (next[s - k] ?? 0) + pr / 2;
      }
      reach += k;
      dist = next;
    }
    const target = Math.round(observed * q);
    let p = 0;
    for (let s = 0; s <= 2 * span; s++) if (Math.abs(s - span) >= target) p += dist[s] ?? 0;
    return Math.min(1, p);
  }
  return null;
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
 * The ratio Σb / Σa with a 95 % interval that carries the clustering of runs within tasks: a bootstrap that resamples
 * whole tasks (seeded), as Hesterberg's expanded percentile interval (2015: the percentiles at
 * Φ(∓√(T_e/(T_e − 1)) · t_{0.975, T_e−1}) with T_e Kish's effective number of tasks), widened where needed to the t-interval on the log
 * ratio (the delta method over tasks, T − 1 degrees of freedom) — at a handful of tasks the bootstrap alone is too
 * narrow. One task has no spread to measure: [0, ∞). Null when no task has a cost or Σa is zero.
 */
export function ratioBootstrap(
  pairs: readonly { a: number; b: number }[],
  { seed = 1, samples = 2000 }: { seed?: number; samples?: number } = {},
): Interval | null {
  const sumA = pairs.reduce((s, p) => s + p.a, 0);
  const sumB = pairs.reduce((s, p) => s + p.b, 0);
  if (pairs.length === 0 || sumA <= 0) return null;
  const T = pairs.length;
  if (T === 1) return { estimate: sumB / sumA, low: 0, high: Infinity };
  const random = seededRandom(seed);
  const ratios: number[] = [];
  for (let n = 0; n < samples; n++) {
    let a = 0;
    let b = 0;
    for (let i = 0; i < T; i++) {
      // "!": random() is in [0, 1), so the index is in [0, T)
      const pick = pairs[Math.floor(random() * T)]!;
      a += pick.a;
      b += pick.b;
    }
    ratios.push(a > 0 ? b / a : Infinity);
  }
  ratios.sort((x, y) => x - y);
  // The expansion counts Kish's effective number of tasks (below), not T: a few costly tasks carry the ratio.
  const effective = Math.max(2, Math.floor(kishTasks(pairs)));
  const tail = normalCdf(-Math.sqrt(effective / (effective - 1)) * tQuantile(0.975, effective - 1));
  // with no samples there is no percentile: NaN, as Math.min/max of a missing one gave before
  const at = (q: number) => ratios[Math.min(ratios.length - 1, Math.max(0, Math.floor(q * ratios.length)))] ?? NaN;
  const t = logRatioInterval(pairs);
  return { estimate: sumB / sumA, low: Math.min(at(tail), t.low), high: Math.max(at(1 - tail), t.high) };
}

/** Kish's effective number of tasks of a ratio of sums weighted by the baseline's costs: (Σa)² / Σa². */
function kishTasks(pairs: readonly { a: number }[]): number {
  const sum = pairs.reduce((s, p) => s + p.a, 0);
  return sum ** 2 / pairs.reduce((s, p) => s + p.a ** 2, 0);
}

/**
 * The t-interval of a ratio of sums on the log scale with the jackknife's variance over tasks (which, unlike the
 * delta method, sees how much one costly task moves the ratio): with L_(t) = log(Σ_{u≠t} b_u / Σ_{u≠t} a_u),
 * SE² = (T − 1)/T · Σ_t (L_(t) − mean L)², and the interval R̂ · exp(± t_{0.975, ν} · SE) with ν = ⌊T_e⌋ − 1
 * (at least 1) degrees of freedom, T_e = (Σa)² / Σa² being Kish's effective number of tasks.
 */
function logRatioInterval(pairs: readonly { a: number; b: number }[]): { low: number; high: number } {
  const T = pairs.length;
  const sumA = pairs.reduce((s, p) => s + p.a, 0);
  const sumB = pairs.reduce((s, p) => s + p.b, 0);
  const leaveOut = pairs.map((p) => Math.log(Math.max(sumB - p.b, 1e-300) / Math.max(sumA - p.a, 1e-300)));
  if (sumB <= 0 || leaveOut.some((x) => !Number.isFinite(x))) return { low: 0, high: Infinity };
  const m = mean(leaveOut);
  const se = Math.sqrt(((T - 1) / T) * leaveOut.reduce((s, x) => s + (x - m) ** 2, 0));
  // Costly tasks weigh more in a ratio of sums: the degrees of freedom are Kish's effective number of tasks − 1.
  const half = tQuantile(0.975, Math.max(1, Math.floor(kishTasks(pairs)) - 1)) * se;
  return { low: (sumB / sumA) * Math.exp(-half), high: (sumB / sumA) * Math.exp(half) };
}

/** The standard normal distribution function (Abramowitz & Stegun 7.1.26 through erf, error below 1.5e-7). */
export function normalCdf(x: number): number {
  const t = 1 / (1 + 0.3275911 * Math.abs(x) / Math.SQRT2);
  const poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  const erf = 1 - poly * Math.exp(-(x * x) / 2);
  return x >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
}

/** exp(mean(log(b / a))) over pairs where both are positive; null when none is. */
export function geometricMeanRatio(pairs: readonly { a: number; b: number }[]): number | null {
  const logs = pairs.filter((p) => p.a > 0 && p.b > 0).map((p) => Math.log(p.b / p.a));
  return logs.length === 0 ? null : Math.exp(mean(logs));
}

/** z(0.975) + z(0.80): a two-sided 5 % test with 80 % power. */
const POWER_FACTOR = Z95 + normalQuantile(0.8);

/**
 * The standard error the difference's interval implies, (U − L) / (2 · z₀.₉₇₅), and from it the smallest true
 * difference this design would detect (80 % power, 5 % level): (z₀.₉₇₅ + z₀.₈₀) · SE. The same variance as the
 * interval and the verdict, so a run whose tasks all agree reports what its size could resolve.
 */
export function detectableDifference(difference: { low: number; high: number }): {
  standard_error: number;
  detectable: number;
} {
  const standard_error = (difference.high - difference.low) / (2 * Z95);
  return { standard_error, detectable: POWER_FACTOR * standard_error };
}

/**
 * The best a suite of T tasks can do at showing non-inferiority when the policies agree on every task (one repeat):
 * the highest lower bound of the paired interval over every count of tasks both solve.
 */
export function bestAgreeingInterval(T: number): Interval {
  let best: Interval = { estimate: 0, low: -1, high: 1 };
  for (let k = 0; k <= T; k++) {
    const rates = Array.from({ length: T }, (_, i) => (i < k ? 1 : 0));
    const interval = pairedDifference(rates, rates);
    if (interval.low > best.low) best = { estimate: 0, low: interval.low, high: interval.high };
  }
  return best;
}

/** The fewest tasks whose best agreeing interval clears −margin (searched up to 100,000; null past it). */
export function tasksNeeded(margin: number): number | null {
  let high = 1;
  while (bestAgreeingInterval(high).low <= -margin) {
    high *= 2;
    if (high > 100_000) return null;
  }
  let low = Math.floor(high / 2);
  while (high - low > 1) {
    const mid = (low + high) >> 1;
    if (bestAgreeingInterval(mid).low > -margin) high = mid;
    else low = mid;
  }
  return high;
}
