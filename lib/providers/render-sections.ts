// Renders TurnRequest sections as text blocks for chat APIs: each section once, with a short label, structured
// content as compact JSON. The same section always renders to the same bytes, so a stable prefix stays cacheable.
import { PREFIX_SECTIONS, type Section } from "../vocabulary/turn.ts";

const LABELS: Record<Section["section"], string> = {
  instructions: "Instructions",
  intent: "Intent",
  tasks: "Tasks (what each request asks, and the actions)",
  checkpoint: "Checkpoint (events retired from the history so far)",
  events: "Events (oldest first)",
  newest: "Newest event, the middle its preview leaves out",
  working_state: "Working state",
  candidates: "Candidates",
  lookups: "Lookup responses",
};

function body(section: Section): string {
  switch (section.section) {
    case "instructions":
    case "intent":
      return section.text;
    case "tasks": {
      const { section: _, ...rest } = section;
      return JSON.stringify(rest);
    }
    case "checkpoint":
      return JSON.stringify(section.checkpoint);
    case "events":
      return JSON.stringify(section.events);
    case "newest":
      return JSON.stringify({ step: section.step, ...section.view });
    case "working_state":
      return JSON.stringify(section.state);
    case "candidates": {
      const { section: _, ...rest } = section;
      return JSON.stringify(rest);
    }
    case "lookups":
      return JSON.stringify(section.responses);
  }
}

export function renderSection(section: Section): string {
  return `## ${LABELS[section.section]}\n${body(section)}`;
}

/**
 * The same text as renderSection, split where a cache breakpoint may go: the events section gives one piece per event
 * (the label and "[" ride on the first, "," leads every later one) and a last piece "]", so an event's piece keeps its
 * bytes while newer events arrive. Every other section is one piece. The pieces joined are renderSection's text.
 */
export function renderSectionBlocks(section: Section): string[] {
  if (section.section !== "events" || section.events.length === 0) return [renderSection(section)];
  const pieces = section.events.map((event, i) => renderEventPiece(event, i === 0));
  pieces.push("]");
  return pieces;
}

/** One event's piece of renderSectionBlocks: the first carries the label and "[", every later one leads with ",". */
export function renderEventPiece(event: unknown, first: boolean): string {
  return `${first ? `## ${LABELS.events}\n[` : ","}${JSON.stringify(event) ?? "null"}`;
}

/** The cacheable prefix (instructions, intent, checkpoint) and everything after it, order kept. */
export function splitPrefix(sections: readonly Section[]): { prefix: Section[]; rest: Section[] } {
  const prefix: Section[] = [];
  const rest: Section[] = [];
  for (const section of sections) {
    (PREFIX_SECTIONS.has(section.section) && rest.length === 0 ? prefix : rest).push(section);
  }
  return { prefix, rest };
}

/** Told to the model only when the API does not carry the response schema itself. */
export function renderAnswerFormat(schema: unknown): string {
  return `## Answer format\nAnswer with one JSON value, and nothing else, that conforms to this JSON Schema:\n${
    JSON.stringify(schema)
  }`;
}
