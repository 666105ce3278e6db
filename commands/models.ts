// loom models: the model table in use (the built-in one or an installed update, merged with --models FILE) with its
// age and each entry's read date, as text or JSON; and loom models update (commands/models-table.ts).
import { UsageError } from "../lib/errors.ts";
import { escapeControl } from "../lib/text/safe-text.ts";
import type { ModelEntry, ModelTable } from "../lib/models/models.ts";
import { parseCommand } from "./cli-spec.ts";
import type { Io } from "./io.ts";
import { MODELS_SPEC } from "./specs.ts";
import { describeTableInUse, readModels, tableInUse, todayOf, updateModels } from "./models-table.ts";

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
    // When its facts were read; "*": some figures are third parties' or carried over (the entry's notes).
    `${entry.date}${entry.notes ? "*" : ""}`,
    retired,
  ];
}

/** The table as aligned columns, one model a line. */
export function renderModels(table: ModelTable, { today }: { today: string }): string {
  const head = [
    "MODEL",
    "API",
    "ANSWER",
    "CONTEXT/OUT",
    "CACHE MIN TTL",
    "USD/M IN OUT READ WRITE",
    "EFFORT",
    "READ",
    "",
  ];
  // A models file's strings reach the terminal: their control characters (an escape sequence) are written as escapes.
  const rows = [head, ...Object.entries(table.models).map(([key, entry]) => row(key, entry, today).map(escapeControl))];
  // every row has a cell per column of head (row() writes them all)
  const widths = head.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  const lines = rows.map((r) => r.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join("  ").trimEnd());
  return `${lines.join("\n")}\n(writes: 5-minute/1-hour for Anthropic, billed writes for OpenAI; READ: when the ` +
    "entry's facts were read, * some only from third parties (notes); sources: loom models --json)\n";
}

export async function modelsCommand(argv: string[], io: Io): Promise<number> {
  if (argv[0] === "update") return await updateCommand(argv.slice(1), io);
  const { values, positionals } = parseCommand(MODELS_SPEC, argv, { command: "models" });
  if (positionals.length > 0) throw new UsageError("loom models takes no arguments (see loom models --help)");
  const table = readModels(values.models, io);
  const today = todayOf(io.now?.());
  if (values.json) io.stdout(`${JSON.stringify(table, null, 2)}\n`);
  else io.stdout(`${describeTableInUse(tableInUse(io.env, { today }), { today })}\n${renderModels(table, { today })}`);
  return 0;
}

async function updateCommand(argv: string[], io: Io): Promise<number> {
  const spec = MODELS_SPEC.subcommands.update;
  const { values, positionals } = parseCommand(spec, argv, { command: "models update" });
  if (positionals.length > 0) throw new UsageError("loom models update takes no arguments (use --from FILE|URL)");
  const done = await updateModels({
    from: values.from,
    env: io.env,
    cwd: io.cwd,
    sha256: values.checksum,
    allowLowerPrices: values["allow-lower-prices"],
    today: todayOf(io.now?.()),
  }, { signal: io.signal });
  const checksum = done.checksum === "pinned"
    ? ", SHA-256 matches --checksum"
    : done.checksum === "beside"
    ? ", checksum verified (it came from the same place as the table: it catches a damaged download, not a forged " +
      "table; pin one with --checksum)"
    : "";
  // The table's own words (a key) are written with their control characters as escapes.
  const lowered = done.lowered.map((line) => `lower price accepted (--allow-lower-prices): ${escapeControl(line)}\n`);
  io.stdout(
    `installed the model table of ${done.updated} (${done.models} models${checksum}) from ${
      escapeControl(done.from)
    } in ${escapeControl(done.path)}\n${lowered.join("")}`,
  );
  return 0;
}

const cell = (text: string) => text.replaceAll("|", "\\|");

/**
 * docs/providers.md's per-model rows, generated from the table (scripts/gen-model-rows.ts writes them between its
 * markers; tests/models-doc.test.ts fails when the doc differs): one row per entry with its facts, status, source and
 * read date, then the notes of the entries that have some (figures only third parties give, or carried over).
 */
export function modelRowsMarkdown(table: ModelTable): string {
  const head = "| model | API | answer | context / output | cache (min tokens, lifetimes) | USD per MTok: in / out / " +
    "cache read / write | effort | status | source, read |\n|---|---|---|---|---|---|---|---|---|";
  const rows = Object.entries(table.models).map(([key, e]) => {
    const p = e.prices;
    const write = p
      ? (p.cache_write_5m !== undefined ? `${usd(p.cache_write_5m)} (5m) / ${usd(p.cache_write_1h)} (1h)` : usd(
        p.cache_write,
      ))
      : "-";
    const tier = p?.long_prompt
      ? `; over ${
        tokens(p.long_prompt.above_tokens)
      } prompt tokens ${p.long_prompt.input}x in, ${p.long_prompt.output}x out`
      : "";
    const price = p ? `${usd(p.input)} / ${usd(p.output)} / ${usd(p.cache_read)} / ${write}${tier}` : "unknown";
    const cache = e.cache ? `${e.cache.breakpoints}, ≥ ${e.cache.min_tokens}, ${e.cache.ttls.join(", ")}` : "none";
    const status = e.retired
      ? `${
        e.retired.date <= (table.updated ?? "") ? "retired" : "retires"
      } ${e.retired.date} → ${e.retired.replacement}`
      : "in service";
    const rules = (e.rules ?? []).map((r) =>
      r.action === "refuse" ? `refuses ${describeWhen(r.when)}` : `${describeWhen(r.when)}: sends thinking disabled`
    );
    const sources = e.source.split(" ").map((url) => url.replace(/^https:\/\//, "")).join(", ");
    return `| \`${key}\` | ${e.api} | ${e.structured_output} | ${tokens(e.context_window)} / ${
      tokens(e.max_output)
    } | ` +
      `${cache} | ${price} | ${e.effort.join(", ") || "-"}${
        rules.length ? `; ${rules.join("; ")}` : ""
      } | ${status} | ` +
      `${cell(sources)}; ${e.date}${e.notes ? " (see notes)" : ""} |`;
  });
  const notes = Object.entries(table.models).flatMap(([key, e]) => (e.notes ? [`- \`${key}\`: ${e.notes}`] : []));
  return `${head}\n${rows.join("\n")}\n${notes.length ? `\nNotes:\n\n${notes.join("\n")}\n` : ""}`;
}

function describeWhen(when: NonNullable<ModelEntry["rules"]>[number]["when"]): string {
  return [
    when.thinking ? `thinking ${when.thinking.join("/")}` : null,
    when.effort ? `effort ${when.effort.join("/")}` : null,
    when.forced_tool ? "a forced tool" : null,
  ].filter((part) => part !== null).join(" with ");
}
