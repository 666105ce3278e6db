// loom report DIR/eval.json [--json | --html FILE] and loom report --merge SHARD/eval.json… [-o FILE]: an evaluation's
// summary and per-task table, or its shards joined into the file one process would have written.
import { readFileSync } from "node:fs";
import { fieldOf } from "../lib/errors.ts";
import { dirname, resolve } from "node:path";
import { describeFsError, UsageError } from "../lib/errors.ts";
import { mergeEvalFiles } from "../lib/eval/assemble.ts";
import { EvalFile } from "../lib/eval/eval-file.ts";
import { readJson } from "../lib/text/json-text.ts";
import { VERSION } from "../lib/version.ts";
import { formatZodError } from "../lib/text/zod-error.ts";
import type { Reporter } from "./reporter.ts";

/** The files parsed as eval.json when the first one is one (kind "eval"); null when it is some other report. */
export function readEvalFiles(files: readonly string[], cwd: string): EvalFile[] | null {
  const parsed: EvalFile[] = [];
  for (const [i, file] of files.entries()) {
    let text: string;
    try {
      text = readFileSync(resolve(cwd, file), "utf8");
    } catch (error) {
      if (i === 0) return null; // the report command says why, in its words
      throw new UsageError(`Cannot read ${JSON.stringify(file)}: ${describeFsError(error)}`);
    }
    const json = readJson(text);
    const kind = json.ok ? fieldOf(json.value, "kind") : undefined;
    if (kind !== "eval") {
      if (i === 0) return null;
      throw new UsageError(`${JSON.stringify(file)} is not an eval.json; evaluations are reported on their own`);
    }
    const result = EvalFile.safeParse(json.ok ? json.value : null);
    if (!result.success) {
      throw new UsageError(`${JSON.stringify(file)} is not a valid eval.json: ${formatZodError(result.error)}`);
    }
    parsed.push(result.data);
  }
  return parsed;
}

export function evalReport(
  files: EvalFile[],
  { paths, merge }: { paths: readonly string[]; merge: { output: string | null } | null },
  reporter: Reporter,
): number {
  if (merge) {
    const merged = mergeEvalFiles(files, { version: VERSION });
    if (!merged.ok) throw new UsageError(`Cannot merge: ${merged.reason}`);
    return reporter.mergedEvaluation(merged.file, { output: merge.output, shards: files.length });
  }
  const [file, ...more] = files;
  const [path] = paths;
  if (file === undefined || path === undefined || more.length > 0) {
    throw new UsageError("Give one eval.json (or several shards with --merge)");
  }
  return reporter.evaluation(file, { dir: dirname(path), ran: "completed" });
}
