// --trace FILE: the request trace as JSON Lines, one line appended per model call as it happens (so an interrupted
// run keeps the calls it made). Holds prompts and payloads: written only when asked for.
import { appendFileSync, writeFileSync } from "node:fs";
import { describeFsError, UsageError } from "../lib/errors.ts";
import type { TraceLine } from "../lib/trace.ts";

export function traceWriter(path: string, { shown }: { shown: string }): (line: TraceLine) => void {
  try {
    writeFileSync(path, "");
  } catch (error) {
    throw new UsageError(`--trace ${JSON.stringify(shown)}: ${describeFsError(error)}`);
  }
  return (line) => appendFileSync(path, `${JSON.stringify(line)}\n`);
}
