// Every command's spec: its flags (types, choices from the zod vocabularies, defaults, descriptions), usage lines and
// examples. Parsing, help, `loom help COMMAND`, the usage lines of `loom --help`, shell completions and did-you-mean
// are all generated from these (commands/cli-spec.ts); a new command, subcommand or flag is one entry here.
import { RECORDING_FORMATS } from "../lib/recording/format.ts";
import { ContextPolicyName, DEFAULT_STEP_PROTOCOL } from "../lib/policy.ts";
import { PROMPT_DEFAULTS } from "../lib/prompt-request.ts";
import { SCHEMAS } from "../lib/schemas.ts";
import { flagOf, settingFlagsOf } from "../lib/settings/setting-table.ts";
import type { CommandSpec, Flag } from "./cli-spec.ts";

export const OUTPUT_FORMATS = ["text", "json", "stream-json"] as const;
const REPLAY_FORMATS = ["auto", ...RECORDING_FORMATS] as const;
export const SHELLS = ["bash", "zsh", "fish", "powershell"] as const;

/** Flags run and replay share, each written once. */
const shared = {
  "context-report": {
    value: "PATH",
    complete: "file",
    description: "write the context report (also when the run fails)",
  },
  "context-policy": flagOf("context_policy"),
  "step-protocol": flagOf("step_protocol"),
  previews: flagOf("previews"),
  sandbox: flagOf("sandbox"),
  "require-passing-tests": flagOf("require_passing_tests"),
  "allow-key-host": flagOf("allow_key_host"),
  "allow-key-env": flagOf("allow_key_env"),
  "sandbox-network": flagOf("sandbox_network"),
  "sandbox-env": flagOf("sandbox_env"),
  "sandbox-read-only": flagOf("sandbox_read_only"),
  "output-format": {
    value: "FORMAT",
    values: OUTPUT_FORMATS,
    default: "text",
    description:
      "text for people, json (one result object) or stream-json (one JSON event per line as the run happens, then the result; schema: loom schema events)",
  },
  json: { description: "short for --output-format json" },
  quiet: { short: "q", description: "no progress on stderr" },
  trace: {
    value: "FILE",
    complete: "file",
    description:
      "write a request trace: one JSON line per model call with the TurnRequest exactly as measured and the provider request body as sent (it holds prompts and workspace content; never credentials)",
  },
  diff: {
    value: "FILE",
    complete: "file",
    description:
      "write the run's workspace changes as a git-style patch (from Loom's own snapshot; git apply takes it on the starting workspace)",
  },
} as const satisfies Record<string, Flag>;

/** --models FILE, the same on every command that resolves a model. */
const modelsFlag = flagOf("models");

const PROMPT = "Prompt options";

export const RUN_SPEC = {
  summary: "run a slice: a prompt, a request file, or a request routed through a catalog",
  usage: [
    '"TEXT" [-m PROVIDER/MODEL] [options]',
    "REQUEST [options]",
    '--catalog FILE "TEXT" [--slice NAME] [options]',
  ],
  description:
    `TEXT is a prompt (or - for stdin) when a model is given: --model, else LOOM_MODEL, else the config file's
"model" (loom config shows which). REQUEST is a SliceRequest file (JSON or JSONC; loom schema request), or -
for one on stdin. A prompt runs in --workspace (default: the current folder) with --max-steps ${PROMPT_DEFAULTS.maxSteps}, the actions
read_file, list_files, search, edit_file, write_file, print and finish, plus run_tests with --test-command and
run_command with --allow-command. Models are "PROVIDER/MODEL": anthropic/…, openai/…, openai-compatible/…, ollama/… or openrouter/…
(README: Providers).`,
  flags: {
    ...settingFlagsOf("run", ["prompt"]),
    actions: { value: "A,B,…", group: PROMPT, description: "exactly these actions (finish is always offered)" },
    "test-command": {
      value: "CMD",
      group: PROMPT,
      description: 'what run_tests runs, split like a shell would (no shell runs it), e.g. "npm test"',
    },
    "test-timeout": {
      value: "SECONDS",
      group: PROMPT,
      default: String(PROMPT_DEFAULTS.testTimeoutSeconds),
      description: "kill the tests after this long",
    },
    "allow-command": {
      value: "CMD",
      multiple: true,
      group: PROMPT,
      description: 'an argv prefix run_command may run, e.g. "git diff"',
    },
    instructions: {
      value: "TEXT",
      group: PROMPT,
      default: "read, make the smallest change, check it, summarise",
      description: "how to work",
    },
    catalog: {
      short: "c",
      value: "FILE",
      complete: "file",
      description: "route the request through a catalog (JSON or JSONC)",
    },
    slice: { value: "NAME", description: "with --catalog: run this slice, skipping routing" },
    workspace: {
      short: "w",
      value: "DIR",
      complete: "folder",
      description: "the workspace (overrides the request's or the catalog's)",
    },
    ...settingFlagsOf("run", ["policy"]),
    "context-report": shared["context-report"],
    record: {
      value: "PATH",
      complete: "file",
      description: "write a recorded workflow (JSONL) that loom replay reproduces",
    },
    ...settingFlagsOf("run", ["limits"]),
    trace: shared.trace,
    diff: shared.diff,
    "output-format": shared["output-format"],
    json: shared.json,
    quiet: shared.quiet,
  },
  positionalsAreFiles: false,
  examples: [
    {
      command:
        'loom run "Fix the failing test in src/slug.ts" -m anthropic/claude-sonnet-5-5 --test-command "npm test"',
      says: "a prompt in the current folder, with run_tests offered",
    },
    {
      command: 'LOOM_MODEL=openai-compatible/qwen3 loom run "Explain src/" --base-url http://127.0.0.1:8080/v1',
      says: "a local OpenAI-compatible server on any port",
    },
    { command: "loom run request.json --context-policy bounded --json", says: "a request file; one result object" },
  ],
} as const satisfies CommandSpec;

export const REPLAY_SPEC = {
  summary: "drive the loop from recorded workflows (Loom's own or other agents'), one or a batch",
  usage: ["RECORDING… | - [options]"],
  description: `RECORDING is a file, a folder of recordings, or - for one recording on stdin. The recorded model answers
drive the governed loop in order, with the recorded execution reports (no workspace needed) or, with --execute, real
execution against --workspace. Several recordings (or a folder) are a batch: parallel workers, a progress line, one
aggregate report and one report per recording.

Exit codes: one recording exits as a run does (1 also when re-execution differed). A batch: 0 when every recording
completed, 1 when any did not or could not be replayed, 130 when interrupted; 2 is a usage error.`,
  flags: {
    from: {
      value: "FORMAT",
      values: REPLAY_FORMATS,
      default: "auto: detect per file",
      description: "the recordings' format",
    },
    "context-policy": shared["context-policy"],
    "step-protocol": {
      ...shared["step-protocol"],
      description: "replay under this protocol: a two-call recording's answers are merged, a single-call one's split",
    },
    previews: shared.previews,
    "context-report": {
      ...shared["context-report"],
      description: "write the context report (for several recordings: the aggregate report)",
    },
    "reports-dir": {
      value: "DIR",
      complete: "folder",
      default: "beside the aggregate, NAME.runs",
      description: "per-recording reports of a batch",
    },
    workspace: { short: "w", value: "DIR", complete: "folder", description: "with --execute: where to execute" },
    execute: { description: "execute for real and compare each report with the recorded one" },
    sandbox: { ...shared.sandbox, description: "with --execute: where test and command processes run" },
    "sandbox-network": shared["sandbox-network"],
    "sandbox-env": shared["sandbox-env"],
    "sandbox-read-only": shared["sandbox-read-only"],
    "require-passing-tests": shared["require-passing-tests"],
    jobs: { short: "j", value: "N", default: "the CPU count", description: "replay a batch in N parallel workers" },
    resume: {
      description:
        "skip recordings whose report exists, is complete and was made under the same settings (policy, version, recording); a report made under others is refused",
    },
    trace: { ...shared.trace, description: "write a request trace of one recording (one JSON line per model call)" },
    diff: { ...shared.diff, description: "with --execute: write the replay's workspace changes as a git-style patch" },
    "output-format": {
      ...shared["output-format"],
      description:
        "text, json (one result object; a batch: its summary with a row per recording) or stream-json (one recording: its events, then the result)",
    },
    compare: {
      description:
        "replay every session under the folders (Claude Code, Codex or any recordings) under legacy and bounded: a table per session and a total, with each session's recorded spend",
    },
    html: {
      value: "FILE",
      complete: "file",
      description: "with --compare: write the table as a self-contained HTML page to FILE and print its path",
    },
    json: shared.json,
    quiet: shared.quiet,
  },
  examples: [
    { command: "loom replay run.jsonl --context-policy bounded", says: "one recording under the bounded policy" },
    {
      command: "loom replay ~/.claude/projects/my-app/ --compare",
      says: "your Claude Code sessions under legacy and bounded, beside what they spent",
    },
    {
      command: "loom replay trajectories/ -j 4 --context-report legacy.json",
      says: "a batch: legacy.json and legacy.runs/",
    },
    {
      command: "loom replay trajectories/ --context-report legacy.json --resume",
      says: "continue an interrupted batch",
    },
  ],
} as const satisfies CommandSpec;

export const REPORT_SPEC = {
  summary: "summarise a context report or compare several (text, JSON or an HTML page); merge shards",
  usage: ["REPORT [REPORT…] [--json | --html FILE] [--label NAME…]", "--merge AGGREGATE… [-o FILE]"],
  description:
    `Summarises one context report (what loom run and loom replay write) or compares several side by side, with
ratios against the first. Batch aggregates are accepted too; two aggregates' runs are paired by recording (never by
position), and runs found in one of them only are listed.`,
  flags: {
    json: { description: "print the summary or comparison as one JSON object" },
    html: {
      value: "FILE",
      complete: "file",
      description: "write a self-contained HTML page with charts to FILE and print its path",
    },
    label: {
      value: "NAME",
      multiple: true,
      default: "the file name",
      description: "name a report in the output (once per report, in order)",
    },
    transcript: {
      value: "FILE",
      multiple: true,
      complete: "file",
      default: "REPORT's stem with .jsonl, .recording.jsonl or .trace.jsonl, when present",
      description:
        "with --html and one run's report: add a transcript from the run's recording and/or trace (sizes only unless --show-content)",
    },
    "show-content": {
      description:
        "with a transcript: show the request text, answers and arguments (they may hold code, prompts and file contents)",
    },
    merge: { description: "merge the aggregate reports of a batch's shards into one (same policy)" },
    output: {
      short: "o",
      value: "FILE",
      complete: "file",
      default: "stdout",
      description: "with --merge: write the merged aggregate to FILE",
    },
  },
  examples: [
    { command: "loom report legacy.json bounded.json", says: "side by side, with ratios against legacy.json" },
    { command: "loom report legacy.json bounded.json --html report.html", says: "an HTML page with charts" },
    { command: "loom report --merge shard-1.json shard-2.json -o all.json", says: "one aggregate from two shards" },
  ],
} as const satisfies CommandSpec;

const EVAL_SUB_FLAGS = {
  jobs: { short: "j", value: "J", default: "2", description: "tasks checked at once" },
  sandbox: shared.sandbox,
  "allow-outside-suite": {
    description:
      "let the suite's paths (workspace, git.repo, check.files, solution, slice.catalog) lead outside its folder",
  },
  json: { description: "print the results as JSON" },
} as const satisfies Record<string, Flag>;

/** Evaluations run sandboxed unless the user says --sandbox off (auto is held to required: no silent fallback). */
const EVAL_SANDBOX = {
  ...shared.sandbox,
  default: "required",
  description: "where runs and checks run: required (auto means required here), or off to run them unsandboxed " +
    "(docs/sandbox.md)",
} as const satisfies Flag;

export const EVAL_SPEC = {
  summary: "run a matched evaluation of context policies on a suite of tasks; validate a suite; rescore",
  usage: ["SUITE -m PROVIDER/MODEL [-m …] [options]"],
  description:
    `Runs every task × model × policy × repeat of SUITE (a suite file, or a folder with suite.jsonc) as a real
run in a fresh workspace copy, pairs the runs that differ only in the policy, interleaves them in a seeded order,
decides each with the task's hidden check, and writes DIR/eval.json (loom schema eval) with per-run rows and a
summary whose unit is the task. Artifacts per run: DIR/runs/ID/attempt-N/ (context report, recording, workspace
changes, check output). See docs/eval.md.`,
  flags: {
    model: { short: "m", value: "PROVIDER/MODEL", multiple: true, description: "a model to evaluate (repeatable)" },
    task: { value: "ID", multiple: true, description: "only these tasks (repeatable)" },
    tag: { value: "TAG", multiple: true, description: "only the tasks with one of these tags (repeatable)" },
    policies: {
      value: "A,B",
      default: ContextPolicyName.options.join(","),
      description: "context policies, the first is the baseline",
    },
    repeats: { value: "N", default: "1", description: "runs per task, model and policy" },
    jobs: { short: "j", value: "J", default: "1", description: "pairs run at once" },
    out: {
      short: "o",
      value: "DIR",
      complete: "folder",
      default: "eval-out",
      description: "where eval.json and runs/ go",
    },
    shard: {
      value: "i/n",
      description: "run only shard i of n (whole pairs, deterministic); loom report merges the shards",
    },
    resume: {
      description:
        "continue the evaluation in DIR (refused when a task, the suite, the prices, Loom's version or the " +
        "settings changed)",
    },
    prices: {
      value: "FILE",
      complete: "file",
      description: "a price table (loom schema prices) overriding or adding to the built-in one",
    },
    "allow-lower-prices": {
      description: "accept --prices below the model table's (each is listed on stderr); without it they are refused",
    },
    seed: { value: "S", default: "loom", description: "seed of the run order and of the statistics" },
    margin: { value: "POINTS", default: "5", description: "non-inferiority margin in percentage points" },
    "cost-margin": {
      value: "PERCENT",
      default: "5",
      description: "cheaper needs the cost ratio's upper bound below 1 − PERCENT/100",
    },
    "max-cost": { value: "USD", description: "stop starting new runs once this much has been spent" },
    retries: {
      value: "N",
      default: "2",
      description: "re-runs of a pair after an infra failure before it is dropped",
    },
    "run-timeout": {
      value: "SECONDS",
      default: "1800",
      description: "the same wall-clock cap for every run; the check decides what it left",
    },
    "step-protocol": { ...shared["step-protocol"], default: DEFAULT_STEP_PROTOCOL },
    "no-cache-marker": {
      description: "do not start each run's prefix with a per-run marker (provider caches may then be shared between " +
        "runs, which favours whichever policy runs second)",
    },
    sandbox: EVAL_SANDBOX,
    "allow-outside-suite": {
      description:
        "let the suite's paths (workspace, git.repo, check.files, solution, slice.catalog) lead outside its folder",
    },
    "provider-deadline-ms": flagOf("provider_deadline_ms"),
    "provider-idle-timeout-ms": flagOf("provider_idle_timeout_ms"),
    json: { description: "print eval.json's summary as JSON instead of text" },
    quiet: { short: "q", description: "no progress line" },
  },
  examples: [
    {
      command: "loom eval evals/ -m anthropic/claude-sonnet-5-5 --repeats 2 --out eval-out",
      says: "legacy against bounded on the shipped suite, two repeats",
    },
    { command: "loom eval evals/ -m openai/gpt-5 --shard 1/4 --out shard-1", says: "one of four shards" },
  ],
  subcommands: {
    validate: {
      summary: "prove every task's check honest: fails before, passes on the reference solution, not fooled",
      usage: ["SUITE [--jobs J]"],
      flags: EVAL_SUB_FLAGS,
    },
    rescore: {
      summary: "re-run the checks on the saved workspace changes of DIR, without calling a model",
      usage: ["DIR [--jobs J]"],
      flags: {
        ...EVAL_SUB_FLAGS,
        sandbox: EVAL_SANDBOX,
        suite: {
          value: "SUITE",
          complete: "file",
          default: "the suite DIR/eval.json names: shown, and only sandboxed",
          description: "the suite whose checks run (a results folder is data: the suite it names runs only sandboxed)",
        },
        "accept-changed-checks": {
          description: "rescore although a task's check changed since the evaluation ran (eval.json records the old " +
            "and new check hashes)",
        },
      },
    },
  },
} as const satisfies CommandSpec;

export const SCHEMA_SPEC = {
  summary: "print the JSON Schema of a file Loom reads or writes",
  usage: [`${Object.keys(SCHEMAS).join("|")}`],
  description: `Prints a JSON Schema generated from the zod schema: of a catalog file, a request file (loom run
REQUEST), one line of a recording, a run's context report, a batch's aggregate report, one event of
the stream-json output (events), an evaluation suite (loom eval SUITE), an evaluation's result
(DIR/eval.json), a price table (given to loom eval), a models file (loom models), or the user config file.`,
  flags: {},
  words: Object.keys(SCHEMAS),
  word: "schema",
  examples: [{ command: "loom schema request > request.schema.json", says: "for editors ($schema)" }],
} as const satisfies CommandSpec;

export const MODELS_SPEC = {
  summary: "list the model table: how each model is called, its limits, cache rules, prices and retirement",
  usage: ["[--models FILE] [--json]"],
  description: `Prints the model table in use (the built-in one, or one \`loom models update\` installed, merged with
--models FILE) and its age: per "PROVIDER/MODEL", the API Loom calls, how a structured answer is obtained, context
window and output limit, the minimum cacheable prompt and cache lifetimes, list prices per million tokens, the effort
values it accepts, its retirement and the date its facts were read. --json prints the table as a models file, each
entry with its source (docs/providers.md).`,
  flags: { models: modelsFlag, json: { description: "print the table as one JSON object (a models file)" } },
  positionalsAreFiles: false,
  examples: [
    { command: "loom models --json > models.json", says: "a models file to edit and pass with --models" },
    { command: "loom models update", says: "install the latest release's table in the config folder" },
  ],
  subcommands: {
    update: {
      summary: "install a newer model table (the latest release's models.json, or a file or URL) for every command",
      usage: ["[--from FILE|URL] [--checksum SHA256] [--allow-lower-prices]"],
      description: `Reads a model table, checks it (its SHA-256 against --checksum, else against FILE.sha256 or
URL.sha256 when there is one, the schema, an "updated" date newer than the table in use and not in the future), then
writes it atomically beside the config file ($XDG_CONFIG_HOME/loom/models.json). Every command uses it merged over the
built-in table until a newer binary ships a newer one. A table may add models and change entries, never remove a
model, undo or postpone a retirement, give an id to another model, or set a price of zero; a price below the built-in
table's needs --allow-lower-prices and is listed. URLs are https:// (or http:// to this machine), fetched with no
credentials, no redirect to another origin, at most 4 MiB and 60 s. A checksum beside the table comes from the same
place: it catches a damaged download, not a forged table (--checksum pins one). Exit 3 when the URL cannot be reached.`,
      flags: {
        from: {
          value: "FILE|URL",
          description: "where to read the table (default: the latest release's models.json on GitHub, LOOM_REPO)",
        },
        checksum: {
          value: "SHA256",
          description: "the table's SHA-256 as published where you trust it; refused when the table differs",
        },
        "allow-lower-prices": {
          description: "accept prices below the built-in table's (each is listed); without it they are refused",
        },
      },
      positionalsAreFiles: false,
    },
  },
} as const satisfies CommandSpec;

export const CONFIG_SPEC = {
  summary: "show the settings a run would use and where each came from (flag, environment, config file, catalog, …)",
  usage: ["[--json] [run's setting flags] [-w DIR] [--catalog FILE [--slice NAME] | --request FILE]"],
  description: `Loom reads defaults from $XDG_CONFIG_HOME/loom/config.jsonc (else ~/.config/loom/config.jsonc;
JSONC; schema: loom schema config), under the environment (LOOM_MODEL, LOOM_CONTEXT_POLICY, LOOM_PROVIDER_BASE_URL,
LOOM_SANDBOX, ANTHROPIC_BASE_URL, OPENAI_BASE_URL) and the flags. Given the flags, catalog (and slice) or request file of a
run, it shows exactly what that run would use: flag > request > catalog > environment > config file > built-in, in each
setting's own order (lib/settings/settings.ts: PRECEDENCE).`,
  flags: {
    ...settingFlagsOf("config", ["prompt"], { group: "Options" }),
    catalog: { value: "FILE", complete: "file", description: "the settings of a run through this catalog" },
    slice: { value: "NAME", description: "with --catalog: of this slice" },
    request: { value: "FILE", complete: "file", description: "the settings of a run of this SliceRequest file" },
    workspace: {
      ...RUN_SPEC.flags.workspace,
      group: "Options",
      description: "the settings of a run in this workspace (loom run -w DIR): its project file .loom/config.jsonc",
    },
    ...settingFlagsOf("config", ["policy", "limits"]),
    json: { description: "print the settings as one JSON object" },
  },
  positionalsAreFiles: false,
  examples: [{ command: "LOOM_MODEL=anthropic/claude-sonnet-5-5 loom config", says: "model comes from LOOM_MODEL" }],
} as const satisfies CommandSpec;

export const DOCTOR_SPEC = {
  summary: "check a model live, as cheaply as possible: key, model, structured answer, cache write then read",
  usage: ["[-m PROVIDER/MODEL] [--base-url URL] [--models FILE] [--json]"],
  description: `Makes at most two small identical calls (a prompt just over the model's minimum cacheable size) and
says whether the key works, the model exists and is not retired, a structured answer comes back valid,
and the second call reads what the first wrote to the prompt cache; with Ollama, also whether a bounded
run's largest request fits the model's context. Prints what it found and what it spent (well under a
cent on most models). Exit 0 when every check passed or does not apply, 3 when it could not start (no
key, unknown or retired model), 1 when a check failed.`,
  flags: {
    model: {
      short: "m",
      value: "PROVIDER/MODEL",
      default: "LOOM_MODEL, then the config's model",
      description: "the model to check",
    },
    "base-url": {
      value: "URL",
      default: "LOOM_PROVIDER_BASE_URL, then the config's base_url, then the provider's",
      description: "the provider's API base URL",
    },
    models: modelsFlag,
    json: { description: "print the result as one JSON object" },
  },
  positionalsAreFiles: false,
  examples: [
    { command: "loom doctor -m anthropic/claude-sonnet-5-5", says: "two calls, a fraction of a cent" },
    { command: "loom doctor -m ollama/qwen2.5-coder:7b --json", says: "a local server: context and answer" },
  ],
} as const satisfies CommandSpec;

export const COMPLETIONS_SPEC = {
  summary: "print a completion script for bash, zsh, fish or PowerShell",
  usage: [SHELLS.join("|")],
  description: `Completes commands, flags (with descriptions) and their values:
  bash  eval "$(loom completions bash)"  (e.g. in ~/.bashrc)
  zsh   loom completions zsh > "\${fpath[1]}/_loom"
  fish  loom completions fish > ~/.config/fish/completions/loom.fish
  powershell  loom completions powershell | Out-String | Invoke-Expression  (e.g. in $PROFILE)`,
  flags: {},
  words: SHELLS,
  word: "shell",
} as const satisfies CommandSpec;

const VERSION_SPEC = {
  summary: "print loom's version, commit and build date (also -v, -V, --version)",
  usage: [""],
  description: `Prints "loom X.Y.Z (commit …, built …)": the commit and UTC build date the binary was built from,
"(from source)" when run from a checkout.`,
  flags: {},
  positionalsAreFiles: false,
} as const satisfies CommandSpec;

const HELP_SPEC = {
  summary: "show the help of loom or of a command",
  usage: ["[COMMAND [SUBCOMMAND]]"],
  flags: {},
  positionalsAreFiles: false,
} as const satisfies CommandSpec;

/** Every command, in the order `loom --help` lists them. */
export const COMMAND_SPECS: Readonly<Record<string, CommandSpec>> = {
  run: RUN_SPEC,
  replay: REPLAY_SPEC,
  report: REPORT_SPEC,
  eval: EVAL_SPEC,
  schema: SCHEMA_SPEC,
  models: MODELS_SPEC,
  config: CONFIG_SPEC,
  doctor: DOCTOR_SPEC,
  completions: COMPLETIONS_SPEC,
  help: HELP_SPEC,
  version: VERSION_SPEC,
};

/** What each exit code means, for `loom --help` and the README (tests/cli-spec.test.ts holds both to lib/outcome.ts). */
export const EXIT_CODE_TEXT: readonly (readonly [number, string])[] = [
  [0, "completed (a slice the model finished with status failure still completed: check verified)"],
  [
    1,
    "failed, a replay that differed, a batch with a run not completed, or completed NOT verified (--require-passing-tests)",
  ],
  [2, "usage error: bad flags or arguments; an unreadable or invalid request, recording, report or config file"],
  [
    3,
    "routing or startup failure: an unreadable or invalid catalog, unknown model, missing key or workspace, no route; " +
    "a URL that cannot be reached (loom models update)",
  ],
  [4, "suspended"],
  [5, "archive capacity exceeded"],
  [6, "step limit"],
  [7, "no valid answer (invalid_answers: three steps in a row without one: invalid twice, bad lookups, or too many)"],
  [8, "cost limit (--max-cost): the run's cost reached the cap, no further model call was made"],
  [130, "interrupted (SIGINT or SIGTERM); the report still lands"],
];
