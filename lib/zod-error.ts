// Renders zod issues as one line: field path and what was expected.
import type { z } from "zod";
import { clipText } from "./clip.ts";

export function formatIssuePath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return "(root)";
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out === "" ? String(part) : `.${String(part)}`;
  }
  return out;
}

export function formatZodError(error: z.ZodError, { limit = 3 }: { limit?: number } = {}): string {
  // Messages can quote what was given (an unrecognized key); keep each one short.
  const issues = error.issues.slice(0, limit).map((issue) =>
    clipText(`${formatIssuePath(issue.path)}: ${issue.message}`, 300)
  );
  const more = error.issues.length > limit ? ` (+${error.issues.length - limit} more)` : "";
  return issues.join("; ") + more;
}
