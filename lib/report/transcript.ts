// A run's transcript for its HTML page (`loom report RUN --html` with the run's recording or trace): each model call
// with its request's sections (sizes; their text only with --show-content) and the model's answer, then the step's
// execution report — the inspector mini-swe-agent and `inspect view` give, built from files Loom already writes, with
// no server. Content stays out by default: a section's size, an answer's action or keys, a report's kind, status and
// revision; never file contents, output or prompts unless the user asked for them.
import { escapeHtml } from "./chart.ts";
import { formatBytes } from "../text/numbers.ts";
import { utf8Length } from "../text/digest.ts";
import { clipText } from "../text/clip.ts";

/** One model call as the transcript shows it. */
export type TranscriptCall = {
  /** 1-based, in the order the calls were made. */
  call: number;
  step: number | null;
  phase: string;
  request_bytes: number | null;
  /** The request's sections (from a trace): name, size and, when content is shown, text. */
  sections: { name: string; bytes: number; text: string | null }[] | null;
  /** The answer (from a recording): a summary, and its JSON when content is shown. */
  answer: { summary: string; bytes: number; text: string | null } | null;
};

/** One executed step's report (from a recording). */
export type TranscriptExecution = {
  step: number;
  action: string;
  facts: string;
  args: string | null;
};

export type Transcript = {
  sources: string[];
  showContent: boolean;
  calls: TranscriptCall[];
  executions: TranscriptExecution[];
};

/** What the files hold, as parsed by the command: a recording's answers and executions, a trace's lines. */
export type TranscriptInput = {
  answers?: { phase: string; step: number; value: unknown; request_bytes?: number }[];
  executions?: { step: number; action: string; args: Record<string, unknown>; report: Record<string, unknown> }[];
  trace?: { call: number; phase: string; request_bytes: number; turn_request: { sections: unknown[] } }[];
};

/** Past this, a shown text is cut (the page stays readable; the files hold the rest). */
const SHOWN_CHARS = 20_000;

const json = (value: unknown) => JSON.stringify(value, null, 2) ?? "null";

function answerSummary(value: unknown): string {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return "not a JSON object";
  const keys = Object.keys(value);
  const lookup = keys.find((k) => k.startsWith("$"));
  if (lookup) return `lookup ${lookup}`;
  if ("action" in value && typeof value.action === "string") return `action ${value.action}`;
  return keys.length === 0 ? "no arguments" : `arguments: ${keys.join(", ")}`;
}

/** Report fields that say how a step went without its content (no digests, no text). */
const REPORT_FACTS = [
  "kind",
  "path",
  "paths",
  "count",
  "exit_code",
  "timed_out",
  "revision",
  "revision_before",
  "revision_after",
  "status",
  "code",
];

function reportFacts(report: Record<string, unknown>): string {
  return REPORT_FACTS.filter((k) => report[k] !== undefined && report[k] !== null)
    .map((k) => `${k} ${typeof report[k] === "string" ? report[k] : JSON.stringify(report[k])}`)
    .join(" · ");
}

export function buildTranscript(
  input: TranscriptInput,
  { sources, showContent }: { sources: string[]; showContent: boolean },
): Transcript {
  const answers = input.answers ?? [];
  const trace = input.trace ?? [];
  const count = Math.max(answers.length, trace.length);
  const calls: TranscriptCall[] = [];
  for (let i = 0; i < count; i++) {
    const answer = answers[i];
    const line = trace[i];
    calls.push({
      call: i + 1,
      step: answer?.step ?? null,
      phase: answer?.phase ?? line?.phase ?? "",
      request_bytes: line?.request_bytes ?? answer?.request_bytes ?? null,
      sections: line
        ? line.turn_request.sections.map((section) => {
          const name = typeof section === "object" && section !== null && "section" in section
            ? String(section.section)
            : "section";
          const text = typeof section === "object" && section !== null && "text" in section &&
              typeof section.text === "string"
            ? section.text
            : json(section);
          return { name, bytes: utf8Length(JSON.stringify(section)), text: showContent ? text : null };
        })
        : null,
      answer: answer
        ? {
          summary: answerSummary(answer.value),
          bytes: utf8Length(JSON.stringify(answer.value) ?? ""),
          text: showContent ? json(answer.value) : null,
        }
        : null,
    });
  }
  const executions = (input.executions ?? []).map((e) => ({
    step: e.step,
    action: e.action,
    facts: reportFacts(e.report),
    args: showContent ? json(e.args) : null,
  }));
  return { sources, showContent, calls, executions };
}

function shown(text: string): string {
  return `<pre class="content">${escapeHtml(clipText(text, SHOWN_CHARS))}</pre>`;
}

/** The transcript section of a run's page. */
export function transcriptHtml(t: Transcript): string {
  const steps = new Map<number | null, TranscriptCall[]>();
  for (const call of t.calls) steps.set(call.step, [...(steps.get(call.step) ?? []), call]);
  const executed = new Map(t.executions.map((e) => [e.step, e]));
  const blocks = [...steps.entries()].map(([step, calls]) => {
    const rows = calls.map((c) => {
      const sections = c.sections
        ? `<ul class="sections">${
          c.sections.map((s) =>
            `<li><span class="name">${escapeHtml(s.name)}</span> <span class="size">${formatBytes(s.bytes)}</span>${
              s.text === null ? "" : shown(s.text)
            }</li>`
          ).join("")
        }</ul>`
        : "";
      const answer = c.answer
        ? `<p class="answer">answer: <strong>${escapeHtml(c.answer.summary)}</strong> <span class="size">${
          formatBytes(c.answer.bytes)
        }</span></p>${c.answer.text === null ? "" : shown(c.answer.text)}`
        : "";
      return `<div class="call"><h4>call ${c.call} · ${escapeHtml(c.phase)}${
        c.request_bytes === null ? "" : ` · ${formatBytes(c.request_bytes)} sent`
      }</h4>${sections}${answer}</div>`;
    }).join("");
    const e = step === null ? undefined : executed.get(step);
    const execution = e
      ? `<p class="execution">executed <strong>${escapeHtml(e.action)}</strong>: ${escapeHtml(e.facts)}</p>${
        e.args === null ? "" : shown(e.args)
      }`
      : "";
    return `<details class="step"${step !== null && step <= 1 ? " open" : ""}><summary>${
      step === null ? "calls" : step === 0 ? "classification" : `step ${step}`
    } · ${calls.length} ${calls.length === 1 ? "call" : "calls"}${
      e ? ` · ${escapeHtml(e.action)}` : ""
    }</summary>${rows}${execution}</details>`;
  }).join("\n");
  const note = t.showContent
    ? "Content is shown (--show-content): request text, answers and arguments as sent and recorded."
    : "Content is left out: sizes, actions and report facts only. loom report … --html FILE --show-content shows the " +
      "request text, answers and arguments (they may hold code, prompts and file contents).";
  return `<section id="transcript">
<h2>Transcript</h2>
<p class="note">From ${escapeHtml(t.sources.join(" and "))}. ${escapeHtml(note)}</p>
${blocks}
</section>`;
}

export const TRANSCRIPT_STYLE = `
#transcript details.step { border-top: 1px solid var(--line); padding: 6px 0; }
#transcript summary { cursor: pointer; font-weight: 600; }
#transcript .call { margin: 6px 0 6px 14px; }
#transcript h4 { font-size: 14px; margin: 6px 0 2px; }
#transcript ul.sections { list-style: none; margin: 0; padding: 0; font-size: 14px; }
#transcript ul.sections li { padding: 1px 0; }
#transcript .size { color: var(--muted); }
#transcript .answer, #transcript .execution { margin: 2px 0 2px 14px; overflow-wrap: anywhere; }
#transcript pre.content { white-space: pre-wrap; overflow-wrap: anywhere; background: #f1f3f5; padding: 6px 8px; border-radius: 4px; max-height: 24em; overflow: auto; font-size: 13px; }
`;
