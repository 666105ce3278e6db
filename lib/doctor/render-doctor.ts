// loom doctor's text: one row per check, then what the calls used and cost, then the verdict.
import type { DoctorResult } from "./doctor.ts";

const LABELS: Record<DoctorResult["checks"][number]["check"], string> = {
  model: "model",
  key: "key",
  context: "context",
  structured_answer: "structured answer",
  cache_write: "cache write",
  cache_read: "cache read",
};

function dollars(amount: number): string {
  return `$${amount.toFixed(6)}`;
}

export function renderDoctor(result: DoctorResult): string {
  const width = Math.max(...Object.values(LABELS).map((label) => label.length));
  const rows = result.checks.map((c) => `  ${LABELS[c.check].padEnd(width)}  ${c.status.padEnd(4)}  ${c.detail}`);
  const u = result.usage;
  const n = (x: number | null) => (x === null ? "—" : String(x));
  const calls = result.calls.length;
  const timed = result.calls.flatMap((c) => (c.timings ? [c.timings] : []));
  const seconds = (ms: number) => (ms / 1000).toFixed(1);
  const spent = timed.length > 0 && result.cost_usd === null
    ? `the server took ${seconds(timed.reduce((s, t) => s + t.prompt_ms, 0))} s for ${
      timed.reduce((s, t) => s + t.prompt_n, 0)
    } prompt tokens (${timed.reduce((s, t) => s + t.cache_n, 0)} reused) and ${
      seconds(timed.reduce((s, t) => s + t.predicted_ms, 0))
    } s for ${timed.reduce((s, t) => s + t.predicted_n, 0)} output tokens`
    : result.cost_usd === null
    ? "cost unknown (no price for this model)"
    : `spent ${dollars(result.cost_usd)}${
      result.prices ? ` (prices of ${result.prices.date}, ${result.prices.source})` : ""
    }`;
  const used = calls === 0
    ? "no call was answered, so no usage to cost: $0"
    : `${calls} call${calls === 1 ? "" : "s"}: input ${n(u.input)}, cache read ${n(u.cache_read)}, cache write ${
      n(u.cache_write)
    }, output ${n(u.output)} tokens; ${spent}`;
  const warned = result.checks.filter((c) => c.status === "warn").map((c) => LABELS[c.check]);
  const verdict = result.outcome === "completed" && warned.length > 0
    ? `ok, with a warning (${warned.join(", ")}): loom run can use this model; its answers may not follow the task`
    : result.outcome === "completed"
    ? "ok: loom run can use this model"
    : `not ready: ${result.error_code} (exit ${result.exit_code})`;
  return `loom doctor ${result.model}\n${rows.join("\n")}\n${used}\n${verdict}\n`;
}
