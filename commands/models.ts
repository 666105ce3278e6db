// loom models: the model table in force (the built-in one, merged with --models FILE), as text or JSON; and the one
// reader of a models file the commands share.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describeFsError, UsageError } from "../lib/errors.ts";
import { BUILT_IN_MODELS } from "../lib/models/built-in.ts";
import { mergeModels, type ModelEntry, ModelTable, overrideProblem } from "../lib/models/models.ts";
import { escapeControl } from "../lib/text/safe-text.ts";
import { describeJsonFailure, parseJsonc } from "../lib/text/json-text.ts";
import { describeIssues, MISSING_FIELDS } from "../lib/text/zod-error.ts";
import { parseCommand } from "./cli-spec.ts";
import type { Io } from "./io.ts";
import { MODELS_SPEC } from "./specs.ts";

/** The built-in table, with the entries of FILE (--models) replacing or adding to it. */
export function readModels(file: string | undefined, cwd: string): ModelTable {
  if (file === undefined) return BUILT_IN_MODELS;
  let text: string;
  try {
    text = readFileSync(resolve(cwd, file), "utf8");
  } catch (error) {
    throw new UsageError(`--models ${JSON.stringify(file)}: ${describeFsError(error)}`);
  }
  const override = parseModels(text, { file });
  const problem = overrideProblem(BUILT_IN_MODELS, override);
  if (problem) throw new UsageError(`Invalid models file ${JSON.stringify(file)}: ${problem}`, "models_invalid");
  return mergeModels(BUILT_IN_MODELS, override);
}

/** A models file (JSON or JSONC), validated: one line naming the file, the field path and what was expected. */
export function parseModels(text: string, { file }: { file: string }): ModelTable {
  const where = `Invalid models file ${JSON.stringify(file)}`;
  const json = parseJsonc(text);
  if (!json.ok) throw new UsageError(`${where}: ${describeJsonFailure(json)}`, "models_invalid");
  const parsed = ModelTable.safeParse(json.value, { error: MISSING_FIELDS });
  if (parsed.success) return parsed.data;
  throw new UsageError(
    `${where}: ${describeIssues(parsed.error, { schema: ModelTable }).slice(0, 3).join("; ")}`,
    "models_invalid",
  );
}

const tokens = (n: number) => (n >= 1_000_000 ? `${Number((n / 1_000_000).toFixed(2))}M` : `${Math.round(n / 1000)}K`);
const usd = (n: number | undefined) => (n === undefined ? "-" : `$${Number(n.toFixed(4))}`);

function row(key: string, entry: ModelEntry, today: string): string[] {
  const p = entry.prices;
  const write = p
    ? (p.cache_write_5m !== undefined ? `${usd(p.cache_write_5m)}/${usd(p.cache_write_1h)}` : usd(p.cache_write))
    : "-";
  const retired = entry.retired
    ? `${entry.retired.date <= today ? "retired" : "retires"} ${entry.retired.date}: use ${entry.retired.replacement}`
    : "";
  return [
    key,
    entry.api,
    entry.structured_output,
    `${tokens(entry.context_window)}/${tokens(entry.max_output)}`,
    entry.cache ? `${entry.cache.min_tokens} ${entry.cache.ttls.join(",")}` : "none",
    p ? `${usd(p.input)} ${usd(p.output)} ${usd(p.cache_read)} ${write}` : "-",
    entry.effort.join(",") || "-",
    retired,
  ];
}

/** The table as aligned columns, one model a line. */
export function renderModels(table: ModelTable, { today }: { today: string }): string {
  const head = ["MODEL", "API", "ANSWER", "CONTEXT/OUT", "CACHE MIN TTL", "USD/M IN OUT READ WRITE", "EFFORT", ""];
  // A models file's strings reach the terminal: their control characters (an escape sequence) are written as escapes.
  const rows = [head, ...Object.entries(table.models).map(([key, entry]) => row(key, entry, today).map(escapeControl))];
  // every row has a cell per column of head (row() writes them all)
  const widths = head.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  const lines = rows.map((r) => r.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join("  ").trimEnd());
  return `${lines.join("\n")}\n(writes: 5-minute/1-hour for Anthropic, billed writes for OpenAI; sources and dates: ` +
    "loom models --json)\n";
}

export function modelsCommand(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommand(MODELS_SPEC, argv, { command: "models" });
  if (positionals.length > 0) throw new UsageError("loom models takes no arguments (see loom models --help)");
  const table = readModels(values.models, io.cwd);
  if (values.json) io.stdout(`${JSON.stringify(table, null, 2)}\n`);
  else io.stdout(renderModels(table, { today: new Date().toISOString().slice(0, 10) }));
  return Promise.resolve(0);
}
