// loom run --catalog FILE: route a request text to a catalog slice and run it. Every startup and routing failure
// leaves a context report (when a report path is known) before main.ts turns the error into one line and exit 3.
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { failureReport, type RunResult, runWithOptions, writeFailureReport } from "../api.ts";
import { createProvider } from "../lib/adapters/providers/create-provider.ts";
import { writeFileAtomic } from "../lib/adapters/files.ts";
import { type Catalog, loadCatalog, renderIntent } from "../lib/catalog.ts";
import type { ContextPolicyName } from "../lib/context.ts";
import { type CallRecord, type ContextReport, ReportBuilder } from "../lib/context-report.ts";
import { EXIT_CODES, InterruptedError, LoomError, RoutingError, StartupError, UsageError } from "../lib/errors.ts";
import { type Routed, routeRequest } from "../lib/routing.ts";
import type { SliceRequest } from "../lib/slice.ts";
import { VERSION } from "../lib/version.ts";
import type { Io } from "./io.ts";
import { endProgress, outputPathOption, outputPathProblem, plural, policyOption, progressPrinter } from "./options.ts";
import { failedResult, renderResultText, summarizeResult } from "./result-reporter.ts";

/** The parsed `loom run` flags (see RUN_OPTIONS in run.ts). */
export type CatalogRunValues = {
  catalog?: string;
  slice?: string;
  workspace?: string;
  "context-policy"?: string;
  "context-report"?: string;
  record?: string;
  json?: boolean;
  quiet?: boolean;
};

/** What a failure report says; filled in as the run gets further. */
type Known = {
  reportPath: string | undefined;
  policy: ContextPolicyName;
  slice: string | null;
  calls: CallRecord[];
  route: Routed | null;
};

export async function runFromCatalog(values: CatalogRunValues, positionals: string[], io: Io): Promise<number> {
  const policyFlag = values["context-policy"] === undefined ? undefined : policyOption(values["context-policy"]);
  if (!values.catalog) throw new UsageError("--catalog needs a FILE");
  if (positionals.length !== 1) throw new UsageError("Expected one REQUEST (the request text, or - for stdin)");
  // Where the report and the recording go is checked before anything runs: a run must not end in an unwritable path.
  const reportFlag = values["context-report"]
    ? outputPathOption("--context-report", values["context-report"], { cwd: io.cwd })
    : undefined;
  const record = values.record ? outputPathOption("--record", values.record, { cwd: io.cwd }) : undefined;
  const request = (positionals[0] === "-" ? await io.readStdin() : positionals[0]).trim();
  if (request === "") throw new UsageError("The request is empty");

  const started = performance.now();
  const known: Known = { reportPath: reportFlag, policy: policyFlag ?? "legacy", slice: null, calls: [], route: null };
  // Once runWithOptions has the run, it writes the report of any failure itself.
  let handedOver = false;
  try {
    const catalogFile = resolve(io.cwd, values.catalog);
    const catalog = readCatalog(catalogFile, values.catalog);
    // Paths in a catalog are relative to the catalog file; paths in flags to the working directory.
    const fromCatalog = (
      path: string | undefined,
    ) => (path === undefined ? undefined : resolve(dirname(catalogFile), path));
    const defaults = catalog.defaults ?? {};
    known.reportPath = reportPathFromCatalog(reportFlag, fromCatalog(defaults.context_report), known);
    known.policy = policyFlag ?? defaults.context_policy ?? "legacy";

    const routed = await chooseSlice(catalog, request, {
      flag: values.slice,
      policy: known.policy,
      io,
      quiet: values.quiet,
      known,
    });
    const name = routed.slice;
    const entry = catalog.slices[name];
    known.slice = name;
    known.reportPath = reportPathFromCatalog(
      reportFlag,
      fromCatalog(entry.context_report ?? defaults.context_report),
      known,
    );
    known.policy = policyFlag ?? entry.context_policy ?? defaults.context_policy ?? "legacy";
    const workspace = values.workspace
      ? resolve(io.cwd, values.workspace)
      : fromCatalog(entry.workspace ?? defaults.workspace);
    if (workspace === undefined) {
      throw new StartupError(
        `Slice "${name}" names no workspace: set "workspace" in the catalog or pass --workspace DIR`,
        "workspace_missing",
      );
    }
    const model = catalog.models[entry.model];
    const provider = createProvider(model, { env: io.env });
    const slice: SliceRequest = {
      intent: renderIntent(entry.intent, request),
      instructions: entry.instructions,
      workspace,
      actions: entry.actions,
      test: entry.test,
      model: model.model,
      limits: entry.limits,
      ...(entry.commands ? { commands: entry.commands } : {}),
    };

    handedOver = true;
    const result = await runWithOptions(slice, {
      contextPolicy: known.policy,
      contextReport: known.reportPath,
      record,
      provider,
      signal: io.signal,
      slice: name,
      priorCalls: known.calls,
      onProgress: values.quiet ? undefined : progressPrinter(io),
      // no model's key reaches the slice's test or command processes
      secretEnvNames: Object.values(catalog.models).flatMap((m) => (m.api_key_env ? [m.api_key_env] : [])),
    });
    if (!values.quiet) endProgress(io);
    printResult(result, { json: values.json, route: routed, io });
    if (result.error && result.exit_code !== 0) io.stderr(`loom run: ${result.error.message}\n`);
    return result.exit_code;
  } catch (error) {
    if (!(error instanceof LoomError)) throw error;
    const report = reportFailure(error, { known, write: !handedOver, elapsedMs: performance.now() - started });
    if (values.json) printResult(failedResult(report, known.reportPath), { json: true, route: known.route, io });
    throw error;
  }
}

/** The flag's report path, else the catalog's, which must be writable too (a startup failure, with no report, if not). */
function reportPathFromCatalog(
  flag: string | undefined,
  fromCatalog: string | undefined,
  known: Known,
): string | undefined {
  if (flag !== undefined || fromCatalog === undefined) return flag;
  const problem = outputPathProblem(fromCatalog);
  if (problem === null) return fromCatalog;
  known.reportPath = undefined;
  throw new StartupError(
    `The catalog's context_report ${JSON.stringify(fromCatalog)}: ${problem}`,
    "report_path_invalid",
  );
}

function readCatalog(path: string, file: string): Catalog {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new StartupError(`Cannot read catalog ${JSON.stringify(file)}: ${reason}`, "catalog_unreadable");
  }
  return loadCatalog(text, { file });
}

async function chooseSlice(
  catalog: Catalog,
  request: string,
  { flag, policy, io, quiet, known }: {
    flag?: string;
    policy: ContextPolicyName;
    io: Io;
    quiet?: boolean;
    known: Known;
  },
): Promise<Routed> {
  const note = (line: string) => {
    if (!quiet) io.stderr(`${line}\n`);
  };
  if (flag !== undefined) {
    if (!Object.hasOwn(catalog.slices, flag)) {
      const names = Object.keys(catalog.slices).map((s) => JSON.stringify(s)).join(", ");
      throw new StartupError(`Unknown slice ${JSON.stringify(flag)} (the catalog has ${names})`, "unknown_slice");
    }
    known.route = { slice: flag, via: "slice_flag", rule: null };
    note(`route: ${flag} (--slice)`);
    return known.route;
  }
  const result = await routeRequest(catalog, request, {
    policy,
    provider: () => {
      const classifier = catalog.models[catalog.routes!.classification!.model];
      return createProvider(classifier, { env: io.env });
    },
    now: () => performance.now(),
    signal: io.signal,
    onClassification: ({ bytes, candidates }) =>
      note(`classification ${bytes.toLocaleString("en-US")} B (${plural(candidates.length, "candidate slice")})`),
  });
  known.calls = result.calls;
  if (!result.ok) throw result.error;
  const { slice, via, rule } = result;
  known.route = { slice, via, rule };
  note(`route: ${slice} (${via === "pattern" ? `pattern rule ${(rule ?? 0) + 1}` : via})`);
  return known.route;
}

/** The report of a run that never reached the loop; written here unless runWithOptions already wrote it. */
function reportFailure(
  error: LoomError,
  { known, write, elapsedMs }: { known: Known; write: boolean; elapsedMs: number },
): ContextReport {
  const fields = {
    policy: known.policy,
    slice: known.slice,
    error: { code: error.code, message: error.reportMessage },
    priorCalls: known.calls,
    elapsedMs: Math.max(0, elapsedMs),
  };
  const outcome = error instanceof InterruptedError
    ? "interrupted"
    : error instanceof RoutingError
    ? "routing_failed"
    : "startup_failed";
  if (write && known.reportPath) return writeFailureReport(known.reportPath, { ...fields, outcome });
  return failureReport({ ...fields, outcome });
}

function printResult(result: RunResult, { json, route, io }: { json?: boolean; route: Routed | null; io: Io }): void {
  const summary = summarizeResult(result);
  if (json) {
    const how = route ? { via: route.via, rule: route.rule } : null;
    io.stdout(`${JSON.stringify({ ...summary, route: how })}\n`);
  } else io.stdout(renderResultText(summary, { label: `run ${summary.slice ?? ""}`.trim() }));
}
