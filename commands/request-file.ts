// A SliceRequest file (or stdin) as a command reads it: JSON or JSONC, validated, its workspace made absolute.
import { readFileSync } from "node:fs";
import { errorCode } from "../lib/errors.ts";
import { dirname, resolve } from "node:path";
import { describeFsError, LoomError, UsageError } from "../lib/errors.ts";
import { describeJsonFailure, readJson } from "../lib/text/json-text.ts";
import { type SliceRequest, SliceRequestFile } from "../lib/slice.ts";
import { formatZodError, MISSING_FIELDS } from "../lib/text/zod-error.ts";
import type { Io } from "./io.ts";

/**
 * The SliceRequest file (or stdin), validated, with the workspace made absolute: --workspace against the current
 * folder, the file's own `workspace` against the file's folder (as catalog paths resolve against the catalog).
 */
export async function readRequest(
  source: string,
  { io, workspace, stdinText }: { io: Io; workspace?: string; stdinText?: string },
): Promise<SliceRequest> {
  let text: string;
  const path = source === "-" ? null : resolve(io.cwd, source);
  try {
    text = path === null ? stdinText ?? await io.readStdin() : readFileSync(path, "utf8");
  } catch (error) {
    if (error instanceof LoomError) throw error; // interrupted while waiting for stdin
    if (errorCode(error) === "ENOENT" && /\s/.test(source.trim())) {
      throw new UsageError(
        `${
          JSON.stringify(source)
        } is not a request file; to run it as a prompt, give --model PROVIDER/MODEL (or set LOOM_MODEL; see loom config)`,
      );
    }
    throw new UsageError(`Cannot read request ${JSON.stringify(source)}: ${describeFsError(error)}`);
  }
  const name = path === null ? "stdin" : source;
  const json = readJson(text, { strictKeys: true });
  if (!json.ok) throw new UsageError(`${name}: not valid JSON: ${describeJsonFailure(json)}`);
  const request = SliceRequestFile.safeParse(json.value, { error: MISSING_FIELDS });
  if (!request.success) {
    throw new UsageError(
      `${name}: invalid SliceRequest: ${formatZodError(request.error, { schema: SliceRequestFile, worded: true })}`,
    );
  }
  const { $schema: _, ...slice } = request.data;
  const base = path === null ? io.cwd : dirname(path);
  return { ...slice, workspace: workspace ?? resolve(base, slice.workspace) };
}
