// --trace FILE: the request trace as JSON Lines, one line appended per model call as it happens (so an interrupted
// run keeps the calls it made). Holds prompts and payloads: written only when asked for. Opened once, never through a
// link (lib/io/files.ts): a test of the run that swaps the file for a symlink changes nothing outside.
import { openLineSink } from "../lib/io/files.ts";
import { describeFsError, UsageError } from "../lib/errors.ts";
import type { TraceLine } from "../lib/recording/trace.ts";

export function traceWriter(
  path: string,
  { shown }: { shown: string },
): ((line: TraceLine) => void) & { settle: () => void } {
  let write: ReturnType<typeof openLineSink>;
  try {
    write = openLineSink(path);
  } catch (error) {
    throw new UsageError(`--trace ${JSON.stringify(shown)}: ${describeFsError(error)}`);
  }
  // settle: at the run's end, the trace written again whole if a process of the run changed it.
  return Object.assign((line: TraceLine) => write(`${JSON.stringify(line)}\n`), { settle: write.settle });
}
