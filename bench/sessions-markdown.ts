// The sessions section of bench/RESULTS.md (bun bench/sessions.ts DIR…): kept verbatim when bench/run.ts regenerates
// the rest, since it needs session folders the benchmark does not have.
export const SESSIONS_START = "<!-- sessions -->";
export const SESSIONS_END = "<!-- /sessions -->";

/** `markdown` with the sessions section (between its markers) replaced by `section`, or appended when it has none. */
export function withSessionsSection(markdown: string, section: string): string {
  const block = `${SESSIONS_START}\n${section.trim()}\n${SESSIONS_END}`;
  const start = markdown.indexOf(SESSIONS_START);
  const end = markdown.indexOf(SESSIONS_END);
  if (start >= 0 && end > start) return markdown.slice(0, start) + block + markdown.slice(end + SESSIONS_END.length);
  return `${markdown.trimEnd()}\n\n${block}\n`;
}

/** `fresh` (a regenerated RESULTS.md) with the sessions section taken verbatim from `previous`, when it has one. */
export function keepSessionsSection(fresh: string, previous: string): string {
  const start = previous.indexOf(SESSIONS_START);
  const end = previous.indexOf(SESSIONS_END);
  if (start < 0 || end < start) return fresh;
  return withSessionsSection(fresh, previous.slice(start + SESSIONS_START.length, end));
}
