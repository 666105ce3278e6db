// `loom run "TEXT" --model PROVIDER/MODEL`: a SliceRequest built from a prompt and flags, with documented defaults, so
// a one-line run needs no request file.
import { ACTION_NAMES, type ActionName } from "./vocabulary/actions.ts";
import { UsageError } from "./errors.ts";
import { SliceRequest, sliceRequest } from "./slice.ts";
import { DEFAULT_MAX_STEPS } from "./policy.ts";
import { formatZodError, MISSING_FIELDS } from "./text/zod-error.ts";

export const PROMPT_DEFAULTS = {
  maxSteps: DEFAULT_MAX_STEPS,
  testTimeoutSeconds: 300,
  instructions: "You work in a software project (the workspace). Read what you need, make the smallest change that " +
    "does what is asked, check it (run the tests when you can), and finish with a short summary of what you did.",
} as const;

/** Actions offered by default: everything that needs no further setting (run_tests and run_command need a command). */
const DEFAULT_PROMPT_ACTIONS: readonly ActionName[] = [
  "read_file",
  "list_files",
  "search",
  "edit_file",
  "write_file",
  "print",
  "finish",
];

export type PromptFlags = {
  text: string;
  model: string;
  /** Absolute. */
  workspace: string;
  maxSteps?: number;
  /** Names as given to --actions (comma-separated); default: DEFAULT_PROMPT_ACTIONS plus what the commands enable. */
  actions?: string[];
  /** argv of --test-command; offers run_tests. */
  testCommand?: string[];
  testTimeoutSeconds?: number;
  /** --effort: checked against the model table when the provider is made. */
  effort?: string;
  /** argv prefixes of --allow-command; offers run_command. */
  allowCommands?: string[][];
  instructions?: string;
};

/** The SliceRequest a prompt and its flags describe; a usage error names the flag that does not fit. */
export function promptRequest(flags: PromptFlags): SliceRequest {
  const unknown = (flags.actions ?? []).filter((a) => !(ACTION_NAMES as readonly string[]).includes(a));
  if (unknown.length > 0) {
    throw new UsageError(
      `--actions: unknown action${unknown.length === 1 ? "" : "s"} ${
        unknown.map((a) => JSON.stringify(a)).join(", ")
      } (expected some of ${ACTION_NAMES.join(", ")})`,
    );
  }
  const actions = new Set<string>(
    flags.actions ?? [
      ...DEFAULT_PROMPT_ACTIONS,
      ...(flags.testCommand ? ["run_tests"] : []),
      ...(flags.allowCommands?.length ? ["run_command"] : []),
    ],
  );
  if (actions.has("run_tests") && !flags.testCommand) {
    throw new UsageError("--actions run_tests needs --test-command CMD (what the tests run)");
  }
  if (actions.has("run_command") && !flags.allowCommands?.length) {
    throw new UsageError("--actions run_command needs --allow-command CMD (which commands it may run)");
  }
  // Checked below like a request file (an empty text, a bad limit): the schema names the field.
  const candidate = sliceRequest({
    intent: flags.text,
    instructions: flags.instructions ?? PROMPT_DEFAULTS.instructions,
    workspace: flags.workspace,
    actions: ACTION_NAMES.filter((a) => actions.has(a)),
    // Without --test-command, run_tests is never offered and this command never runs.
    test: {
      command: flags.testCommand ?? ["true"],
      timeout_ms: (flags.testTimeoutSeconds ?? PROMPT_DEFAULTS.testTimeoutSeconds) * 1000,
    },
    model: flags.model,
    limits: { max_steps: flags.maxSteps ?? PROMPT_DEFAULTS.maxSteps },
    commands: flags.allowCommands?.length ? flags.allowCommands : undefined,
    effort: flags.effort,
  });
  const parsed = SliceRequest.safeParse(candidate, { error: MISSING_FIELDS });
  if (!parsed.success) throw new UsageError(`Invalid run: ${formatZodError(parsed.error, { schema: SliceRequest })}`);
  return parsed.data;
}

/**
 * A command line split into argv the way a shell would for plain words and quotes ("npm test", "pytest -k 'not
 * slow'"), without expanding anything: no variables, globs or operators (the command runs without a shell).
 */
export function splitCommand(text: string): string[] {
  const out: string[] = [];
  let word: string | null = null;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text.charAt(i);
    if (quote) {
      if (c === quote) quote = null;
      else if (c === "\\" && quote === '"' && (text[i + 1] === '"' || text[i + 1] === "\\")) {
        word = (word ?? "") + text.charAt(++i);
      } else word += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      word ??= "";
    } else if (/\s/.test(c)) {
      if (word !== null) out.push(word);
      word = null;
    } else if (c === "\\" && i + 1 < text.length) {
      word = (word ?? "") + text[++i];
    } else word = (word ?? "") + c;
  }
  if (quote) throw new UsageError(`Unterminated ${quote} quote in ${JSON.stringify(text)}`);
  if (word !== null) out.push(word);
  return out;
}
