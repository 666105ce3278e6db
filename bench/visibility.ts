// Information visibility: of the identifiers (paths, names, dotted symbols) in a step's action arguments that the
// agent learned from an earlier observation (and that the intent and instructions do not already hold), the share
// present in the request that produced the action. A proxy for "the model still sees what it uses". The checkpoint
// section is left out of the search: a section that lists identifiers would raise the figure without showing work;
// so is the selection's reason an arguments request repeats (the model's own words of the same step).
import type { Recording } from "../lib/recording/recording.ts";
import type { TurnRequest } from "../lib/vocabulary/turn.ts";

const TOKEN = /[A-Za-z0-9_./-]+/g;

/** Identifier-like tokens: at least 4 characters, a letter, and a path separator, a dot, an underscore or camelCase. */
export function identifiers(text: string): Set<string> {
  const found = new Set<string>();
  for (const match of text.matchAll(TOKEN)) {
    const token = match[0].replace(/^[.\/-]+|[.\/-]+$/g, "");
    if (token.length < 4 || !/[A-Za-z]/.test(token)) continue;
    if (!/[\/_]|[A-Za-z0-9]\.[A-Za-z_]|[a-z][A-Z]/.test(token)) continue;
    found.add(token);
  }
  return found;
}

function stringsOf(value: unknown, out: string[] = []): string[] {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) { for (const v of value) stringsOf(v, out); }
  else if (value !== null && typeof value === "object") { for (const v of Object.values(value)) stringsOf(v, out); }
  return out;
}

/** Per executed step: the identifiers its action uses that only an earlier observation could have taught. */
export function learnedIdentifiers(recording: Recording): Map<number, string[]> {
  const given = `${recording.header.slice.intent}\n${recording.header.slice.instructions}`;
  const byStep = new Map<number, string[]>();
  let observed = "";
  for (const execution of recording.executions) {
    const used = identifiers(stringsOf(execution.args).join("\n"));
    const learned = [...used].filter((id) => observed.includes(id) && !given.includes(id));
    byStep.set(execution.step, learned);
    observed += `\n${Object.values(execution.results).join("\n")}`;
  }
  return byStep;
}

/**
 * The request text searched for identifiers: every section but the checkpoint, and without the reason the candidates
 * of a two-call arguments request repeat — the model's own words of this very step, which a single-call request never
 * has, so the two protocols are scored alike.
 */
export function visibleText(request: TurnRequest): string {
  return JSON.stringify(
    request.sections.filter((s) => s.section !== "checkpoint").map((s) => {
      if (s.section !== "candidates" || s.reason === undefined) return s;
      const { reason: _, ...rest } = s;
      return rest;
    }),
  );
}

export type Visibility = { steps: number; identifiers: number; visible: number };

export const emptyVisibility = (): Visibility => ({ steps: 0, identifiers: 0, visible: 0 });

export function addVisibility(into: Visibility, from: Visibility): void {
  into.steps += from.steps;
  into.identifiers += from.identifiers;
  into.visible += from.visible;
}

/** Scores the request that produced a step's action; returns how many of its identifiers the request missed. */
export function scoreStep(into: Visibility, learned: readonly string[] | undefined, request: TurnRequest): number {
  if (!learned || learned.length === 0) return 0;
  const text = visibleText(request);
  into.steps += 1;
  into.identifiers += learned.length;
  let missed = 0;
  for (const id of learned) {
    if (text.includes(id)) into.visible += 1;
    else missed += 1;
  }
  return missed;
}
