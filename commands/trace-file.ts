// --trace FILE: the request trace as JSON Lines, one line appended per model call as it happens (so an interrupted
// run keeps the calls it made). Holds prompts and payloads: written only when asked for. Opened once, never through a
// link (lib/io/files.ts): a test of the run that swaps the file for a symlink changes nothing outside.
import { openLineSink } from "../lib/io/files.ts";
import { describeFsError, UsageError } from "../lib/errors.ts";
import type { TraceLine } from "../lib/recording/trace.ts";

export function traceWriter(path: string, { shown }: { shown: string }): (line: TraceLine) => void {
  let write: (line: string) => void;
  try {
    write = openLineSink(path);
  } catch (error) {
    throw new UsageError(`--trace ${JSON.stringify(shown)}: ${describeFsError(error)}`);
  }
  return (line) => write(`${JSON.stringify(line)}\n`);
}
