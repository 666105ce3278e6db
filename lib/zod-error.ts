// Renders zod issues as one line: field path and what was expected.
import type { z } from "zod";

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
  const issues = error.issues.slice(0, limit).map((issue) => `${formatIssuePath(issue.path)}: ${issue.message}`);
  const more = error.issues.length > limit ? ` (+${error.issues.length - limit} more)` : "";
  return issues.join("; ") + more;
}
