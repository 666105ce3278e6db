// loom run: run a slice with a real model provider over a real workspace.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { failureReport, runWithOptions, writeFailureReport } from "../api.ts";
import { InterruptedError, LoomError, UsageError } from "../lib/errors.ts";
import { SliceRequest } from "../lib/slice.ts";
import { formatZodError } from "../lib/zod-error.ts";
import type { Io } from "./io.ts";
import { endProgress, outputPathOption, parseCommandArgs, policyOption, progressPrinter } from "./options.ts";
import { providerForModel } from "./provider-for-model.ts";
import { failedResult, renderResultText, summarizeResult } from "./result-reporter.ts";

const HELP = `loom run [REQUEST | -] [options]

Runs one slice. REQUEST is a SliceRequest JSON file (or - for stdin); with --catalog it is the request text and
the catalog routes it to a slice.

Options:
  --catalog FILE          route the request through a catalog (JSON or JSONC)
  --slice NAME            with --catalog: run this slice, skipping routing
  --workspace DIR         override the workspace
  --context-policy NAME   legacy (default) or bounded
  --context-report PATH   write the context report (also when the run fails)
  --record PATH           write a recorded workflow (JSONL) that loom replay reproduces
  --json                  print one JSON result object on stdout
  --quiet                 no progress on stderr

The model is "PROVIDER/MODEL": anthropic/…, openai/… or openai-compatible/… (see README: Providers).
`;

export const RUN_OPTIONS = {
  catalog: { type: "string" },
  slice: { type: "string" },
  workspace: { type: "string" },
  "context-policy": { type: "string" },
  "context-report": { type: "string" },
  record: { type: "string" },
  json: { type: "boolean", default: false },
  quiet: { type: "boolean", default: false },
  help: { type: "boolean", short: "h", default: false },
} as const;

export async function runCommand(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, RUN_OPTIONS, { command: "run" });
  if (values.help) {
    io.stdout(HELP);
    return 0;
  }
  if (values.catalog !== undefined) {
    const { runFromCatalog } = await import("./run-catalog.ts");
    return runFromCatalog(values, positionals, io);
  }
  if (values.slice !== undefined) throw new UsageError("--slice needs --catalog FILE");
  if (positionals.length !== 1) throw new UsageError("Expected one REQUEST (a SliceRequest JSON file, or - for stdin)");
  const contextPolicy = policyOption(values["context-policy"] ?? "legacy");
  // Where the report and the recording go is checked before anything runs: a run must not end in an unwritable path.
  const contextReport = values["context-report"]
    ? outputPathOption("--context-report", values["context-report"], { cwd: io.cwd })
    : undefined;
  const record = values.record ? outputPathOption("--record", values.record, { cwd: io.cwd }) : undefined;

  /** A slice that never started still leaves its report (written here when `write`), and --json one result object. */
  const unstarted = (
    error: unknown,
    { write, reportPath }: { write: boolean; reportPath: string | undefined },
  ): never => {
    if (error instanceof LoomError && !(error instanceof InterruptedError)) {
      const fields = {
        policy: contextPolicy,
        slice: null,
        outcome: "startup_failed" as const,
        error: { code: error.code, message: error.reportMessage },
        priorCalls: [],
        elapsedMs: 0,
      };
      const report = write && reportPath ? writeFailureReport(reportPath, fields) : failureReport(fields);
      // An invalid request file keeps its usage exit code (2) in the result object too.
      const result = { ...failedResult(report, reportPath), exit_code: error.exitCode };
      if (values.json) io.stdout(`${JSON.stringify(summarizeResult(result))}\n`);
    }
    throw error;
  };

  let slice: SliceRequest;
  try {
    slice = await readRequest(positionals[0], { io, workspace: values.workspace });
  } catch (error) {
    unstarted(error, { write: false, reportPath: undefined }); // a usage error: no report
  }
  let provider;
  try {
    provider = providerForModel(slice!.model, { env: io.env });
  } catch (error) {
    unstarted(error, { write: true, reportPath: contextReport });
  }
  let result;
  try {
    result = await runWithOptions(slice!, {
      contextPolicy,
      contextReport,
      record,
      provider,
      signal: io.signal,
      onProgress: values.quiet ? undefined : progressPrinter(io),
    });
  } catch (error) {
    unstarted(error, { write: false, reportPath: contextReport }); // runWithOptions has written the report already
  }
  if (!values.quiet) endProgress(io);
  const summary = summarizeResult(result!);
  if (values.json) io.stdout(`${JSON.stringify(summary)}\n`);
  else io.stdout(renderResultText(summary, { label: "run" }));
  if (result!.error && result!.exit_code !== 0) io.stderr(`loom run: ${result!.error.message}\n`);
  return result!.exit_code;
}

/** The SliceRequest file (or stdin), validated, with the workspace made absolute (--workspace wins). */
async function readRequest(source: string, { io, workspace }: { io: Io; workspace?: string }): Promise<SliceRequest> {
  let text: string;
  try {
    text = source === "-" ? await io.readStdin() : readFileSync(resolve(io.cwd, source), "utf8");
  } catch (error) {
    if (error instanceof LoomError) throw error; // interrupted while waiting for stdin
    throw new UsageError(
      `Cannot read request ${JSON.stringify(source)}: ${
        (error as NodeJS.ErrnoException).code ?? (error as Error).message
      }`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${source}: not valid JSON (${(error as Error).message})`);
  }
  const request = SliceRequest.safeParse(json);
  if (!request.success) throw new UsageError(`${source}: invalid SliceRequest: ${formatZodError(request.error)}`);
  return { ...request.data, workspace: resolve(io.cwd, workspace || request.data.workspace) };
}
