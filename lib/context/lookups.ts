// Answers lookups. Lookups only select data: they never change the workspace, grant authority or act.
import type { Lookup } from "../vocabulary/answer.ts";
import type { Archive } from "./archive.ts";
import { parseReference, select } from "./reference.ts";
import type { ResultStore } from "./store.ts";

export type LookupResponse =
  | { lookup: Lookup; content: string }
  | { lookup: Lookup; page: unknown }
  | { lookup: Lookup; error: string };

export function answerLookup(
  lookup: Lookup,
  { store, archive }: { store: ResultStore; archive: Archive },
): LookupResponse {
  if ("$list_history" in lookup) {
    return { lookup, page: archive.list(lookup.$list_history) };
  }
  const isResult = "$result" in lookup;
  const text = isResult ? lookup.$result : lookup.$read_history;
  const parsed = parseReference(text);
  if (!parsed.ok) return { lookup, error: parsed.error };
  const { digest: named, selection } = parsed.reference;
  const digest = isResult ? store.resolve(named) : archive.resolve(named);
  const content = digest === undefined ? undefined : isResult ? store.get(digest) : archive.get(digest)?.canonical;
  if (content === undefined) {
    return {
      lookup,
      error: `Unknown reference ${named}: no ${isResult ? "stored result" : "archived event"} has this digest`,
    };
  }
  const selected = select(content, selection);
  return selected.ok ? { lookup, content: selected.content } : { lookup, error: selected.error };
}
