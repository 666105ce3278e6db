// Every setting of a run, one record each (issue 45; STYLE 14): its flag, environment variable, config file field,
// whether a project's file may set it, its precedence, default, parsing and where `loom config` shows it. The CLI
// specs' setting flags (commands/specs.ts), the precedence and the config files' schemas (settings.ts), `loom config`'s
// rows, the flags' parsing and the library's setting options (start-run.ts) are derived from this table: a setting is
// added here, and reaches the run's settings and `loom config` without another edit. Pure.
import { z } from "zod";
import {
  ContextPolicyName,
  DEFAULT_MAX_STEPS,
  DEFAULT_POLICY,
  DEFAULT_PREVIEW_MODE,
  DEFAULT_STEP_PROTOCOL,
  PreviewMode,
  StepProtocol,
} from "../policy.ts";
import { SandboxMode } from "../sandbox-state.ts";
import { UsageError } from "../errors.ts";
import { DEFAULT_DEADLINE_MS, DEFAULT_IDLE_TIMEOUT_MS } from "../providers/call-options.ts";
import { HttpUrl, MAX_TIMER_MS, type ProviderConfig, TimerMs } from "./provider-config.ts";
import { modelRefText } from "../models/provider-kinds.ts";

/** Where a setting's value came from; "default": Loom's own, when nothing else set it. */
export type Source = "flag" | "environment" | "project" | "config" | "catalog" | "request" | "default";

/** A flag as help, completion and parsing see it (commands/cli-spec.ts's Flag): one type for every command's flags. */
export type FlagSpec = {
  /** A one-letter alias: -m for --model. */
  short?: string;
  /** The placeholder of a flag that takes a value (FILE, N, PROVIDER/MODEL); absent for a switch. */
  value?: string;
  /** The only values accepted, in the order help lists them (take them from the zod vocabularies). */
  values?: readonly string[];
  /** What a shell completes for a free value: files, folders, or nothing (the default). */
  complete?: "file" | "folder";
  /** Repeatable: every occurrence is kept, in order. */
  multiple?: true;
  /** What happens without the flag, as help shows it. */
  default?: string;
  description: string;
  /** The heading help lists the flag under (default "Options"). */
  group?: string;
};

/** A setting's flag: its spec and its name (without "--"). */
export type SettingFlagSpec = FlagSpec & { name: string };

/** Where `loom run --help` lists a setting's flag: with the prompt's options, the policy's, or the limits'. */
export type Section = "prompt" | "policy" | "limits";

/** The commands whose spec takes a setting's flag from this table (replay and eval pick theirs by name). */
export type SettingCommand = "run" | "config";

/** What a request file (or a recording's slice, or a prompt) names itself. */
export type RequestSettings = {
  /** The file as the user named it, for messages. */
  file: string;
  model: string;
  step_protocol?: StepProtocol;
  previews?: PreviewMode;
  sandbox?: { mode?: SandboxMode };
  limits?: { max_steps: number; max_cost_usd?: number };
  require_passing_tests?: boolean;
  effort?: string;
  thinking?: ProviderConfig["thinking"];
};

/** A catalog's level: its defaults, or one slice (which adds its model and limits). */
export type CatalogLevel = {
  context_policy?: ContextPolicyName;
  step_protocol?: StepProtocol;
  previews?: PreviewMode;
  sandbox?: { mode?: SandboxMode };
  limits?: { max_steps: number };
};

/** A setting's record as written in the table: what it leaves out is the default of `Entry`. */
type Written<T> = {
  /** Its flag (run's and config's specs take it from here); absent: none. */
  flag?: SettingFlagSpec;
  /** Where run's help lists the flag; absent: not a flag of run's. */
  section?: Section;
  /** The commands that take the flag: config takes every flag that changes what it shows. */
  commands?: readonly SettingCommand[];
  /** The flag's text as the value (a usage error naming the flag); absent: the text (or list, or switch) is it. */
  parse?: (text: string, flag: string) => T;
  /** Its environment variable (checked by `schema`, said as `expected`); absent: none. */
  env?: string;
  expected?: string;
  /** The config file field's schema; absent: the user's file cannot set it. */
  schema?: z.ZodType<T>;
  /** The config file field's description (the JSON Schema's, for editors). */
  describe?: string;
  /** A project's file (.loom/config.jsonc) may set it (true: as the user's file; `{ describe }`: with its own words),
   * or, a string, why it may not: a project's file travels with the code it configures. Absent: it may not. */
  project?: true | { describe: string } | string;
  /** Strongest first; absent: not resolved (a grant, or a flag read where it applies). */
  precedence?: readonly Source[];
  /** Loom's own value, when nothing else sets it. */
  default?: T;
  /** Resolved by resolveSettings' one generic rule (the others have rules of their own: model, sandbox, provider). */
  generic?: true;
  /** Where a request file names it, and the name of that field for messages. */
  request?: { field: string; read: (request: RequestSettings) => T | undefined };
  /** Where a catalog names it: `levelled`, the slice's own, else the catalog's defaults; else the slice's only. */
  catalog?: { field: string; read: (level: CatalogLevel) => T | undefined; levelled: boolean };
  /** Where `loom config` shows it: with the run's settings, with the provider's; absent: not shown. */
  shown?: "run" | "provider";
  /** Its name among the library's options (RunOptions); absent: not a library option. */
  option?: string;
};

/** A record with its defaults in place (null: none), as the code that walks the table reads it. */
type Entry<T> =
  & Omit<Written<T>, "flag" | "section" | "commands" | "env" | "schema" | "project" | "precedence" | "shown">
  & {
    flag: SettingFlagSpec | null;
    section: Section | null;
    commands: readonly SettingCommand[];
    env: string | null;
    schema: z.ZodType<T> | null;
    project: boolean | { describe: string } | string;
    precedence: readonly Source[] | null;
    shown: "run" | "provider" | null;
  };

/** One record, its literal types kept (flag names, value lists): the specs' types are derived from them. */
const setting = <T>() => <const E extends Written<T>>(entry: E): E & { readonly value?: T } => entry;

/** A whole number of at least 1. */
export function positiveInteger(flag: string, value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) {
    throw new UsageError(`${flag} ${JSON.stringify(value)}: expected a positive integer`);
  }
  return n;
}

/** A timer's milliseconds: a positive whole number a timer can hold. */
export function milliseconds(flag: string, value: unknown): number {
  const ms = Number(value);
  if (!Number.isInteger(ms) || ms <= 0) {
    throw new UsageError(`${flag} ${JSON.stringify(value)}: expected a positive number of milliseconds`);
  }
  if (ms > MAX_TIMER_MS) {
    throw new UsageError(
      `${flag} ${JSON.stringify(value)}: expected at most ${MAX_TIMER_MS} milliseconds (about 24 days; a longer ` +
        "timer fires at once)",
    );
  }
  return ms;
}

/** A money cap in US dollars: a positive number ("0.50", "2", "$2"). */
function dollars(flag: string, value: string): number {
  const usd = Number(value.trim().replace(/^\$/, ""));
  if (value.trim() === "" || !Number.isFinite(usd) || usd <= 0) {
    throw new UsageError(`${flag} ${JSON.stringify(value)}: expected an amount of US dollars above 0, e.g. 0.50`);
  }
  return usd;
}

const PROMPT = "Prompt options";
const DEADLINE = "a model call, retries included, ends within N ms";
const IDLE = "an attempt that receives nothing for N ms fails and is retried";

/** Every setting, in the order `loom config` shows them and help lists them within a section. */
export const SETTINGS = {
  model: setting<string>()({
    flag: {
      name: "model",
      short: "m",
      value: "PROVIDER/MODEL",
      group: PROMPT,
      default: "LOOM_MODEL, then the config's model",
      description: "the model (makes TEXT a prompt)",
    },
    section: "prompt",
    commands: ["run", "config"],
    env: "LOOM_MODEL",
    expected: "PROVIDER/MODEL",
    schema: modelRefText(),
    describe: 'The model of prompt runs (loom run "TEXT"): "PROVIDER/MODEL", e.g. "anthropic/claude-sonnet-5-5"',
    project: "which model (and provider) gets the workspace is the user's choice",
    precedence: ["flag", "request", "catalog", "environment", "config"],
    shown: "run",
  }),
  models: setting<string>()({
    flag: {
      name: "models",
      value: "FILE",
      complete: "file",
      description: "a models file (loom schema models) whose entries replace or add to the built-in model table",
    },
    section: "prompt",
    commands: ["run"],
  }),
  context_policy: setting<ContextPolicyName>()({
    flag: {
      name: "context-policy",
      value: "NAME",
      values: ContextPolicyName.options,
      default: `${DEFAULT_POLICY}, or LOOM_CONTEXT_POLICY, or the config's context_policy`,
      description: "the context policy",
    },
    section: "policy",
    commands: ["run", "config"],
    env: "LOOM_CONTEXT_POLICY",
    expected: ContextPolicyName.options.join(" or "),
    schema: ContextPolicyName,
    describe: `The context policy of run and replay: ${ContextPolicyName.options.join(" or ")}`,
    project: true,
    precedence: ["flag", "catalog", "environment", "project", "config", "default"],
    default: DEFAULT_POLICY,
    generic: true,
    catalog: { field: "context_policy", read: (level) => level.context_policy, levelled: true },
    shown: "run",
    option: "contextPolicy",
  }),
  base_url: setting<string>()({
    flag: {
      name: "base-url",
      value: "URL",
      group: PROMPT,
      default: "LOOM_PROVIDER_BASE_URL, then the config's base_url, then the provider's",
      description: "the provider's API base URL, e.g. an OpenAI-compatible server at http://127.0.0.1:8080/v1",
    },
    section: "prompt",
    commands: ["run", "config"],
    env: "LOOM_PROVIDER_BASE_URL",
    schema: HttpUrl,
    describe: "The API base URL of the model's provider, e.g. an OpenAI-compatible server: http://127.0.0.1:8080/v1",
    project: "where requests and keys go is the user's choice",
    precedence: ["flag", "catalog", "environment", "config", "default"],
    shown: "provider",
  }),
  effort: setting<string>()({
    flag: {
      name: "effort",
      value: "LEVEL",
      group: PROMPT,
      default: "the provider's",
      description: "how hard the model reasons (Anthropic effort, OpenAI reasoning effort): a value loom models lists",
    },
    section: "prompt",
    commands: ["run"],
  }),
  step_protocol: setting<StepProtocol>()({
    flag: {
      name: "step-protocol",
      value: "NAME",
      values: StepProtocol.options,
      default: `${DEFAULT_STEP_PROTOCOL} (replay: the recording's own)`,
      description: "two-call (a selection call, then an arguments call per step) or single-call (one call per step)",
    },
    section: "policy",
    commands: ["run", "config"],
    precedence: ["flag", "request", "catalog", "default"],
    default: DEFAULT_STEP_PROTOCOL,
    generic: true,
    request: { field: "step_protocol", read: (request) => request.step_protocol },
    catalog: { field: "step_protocol", read: (level) => level.step_protocol, levelled: true },
    shown: "run",
    option: "stepProtocol",
  }),
  previews: setting<PreviewMode>()({
    flag: {
      name: "previews",
      value: "SIZE",
      values: PreviewMode.options,
      default: DEFAULT_PREVIEW_MODE,
      description: "bounded previews of retained outputs: compact (512 B), balanced (512 B-2 KiB) or wide (1-4 KiB)",
    },
    section: "policy",
    commands: ["run", "config"],
    precedence: ["flag", "request", "catalog", "default"],
    default: DEFAULT_PREVIEW_MODE,
    generic: true,
    request: { field: "previews", read: (request) => request.previews },
    catalog: { field: "previews", read: (level) => level.previews, levelled: true },
    shown: "run",
    option: "previewMode",
  }),
  api_key_env: setting<string | null>()({
    project: "which key is sent is the user's choice",
    precedence: ["catalog", "default"],
    shown: "provider",
  }),
  sandbox: setting<SandboxMode>()({
    flag: {
      name: "sandbox",
      value: "MODE",
      values: SandboxMode.options,
      default: "auto",
      description: "where test and command processes run (docs/sandbox.md)",
    },
    section: "limits",
    commands: ["run", "config"],
    env: "LOOM_SANDBOX",
    expected: "auto, required or off",
    project: "the sandbox is the user's choice (--sandbox, LOOM_SANDBOX)",
    precedence: ["flag", "environment", "default", "request", "catalog"],
    default: "auto",
    shown: "run",
    option: "sandbox",
  }),
  max_steps: setting<number>()({
    flag: {
      name: "max-steps",
      value: "N",
      group: PROMPT,
      default: String(DEFAULT_MAX_STEPS),
      description: "at most N executed actions",
    },
    section: "prompt",
    commands: ["run", "config"],
    parse: (text, flag) => positiveInteger(flag, text),
    schema: z.number().int().positive(),
    describe: `A prompt run's step limit (a request or catalog names its own); default ${DEFAULT_MAX_STEPS}`,
    project: {
      describe:
        "A prompt run's step limit for this project; never above the user's own (their file's, else the default)",
    },
    precedence: ["flag", "request", "catalog", "project", "config", "default"],
    default: DEFAULT_MAX_STEPS,
    generic: true,
    request: { field: "limits.max_steps", read: (request) => request.limits?.max_steps },
    catalog: { field: "limits.max_steps", read: (level) => level.limits?.max_steps, levelled: false },
    shown: "run",
  }),
  require_passing_tests: setting<boolean>()({
    flag: {
      name: "require-passing-tests",
      description:
        "refuse a finish with status success unless the latest revision's tests ran and passed, and exit 1 when the run completes unverified (any other ending keeps its own exit code: 6 at the step limit)",
    },
    section: "limits",
    commands: ["run"],
    precedence: ["flag", "request", "default"],
    default: false,
    generic: true,
    request: { field: "require_passing_tests", read: (request) => request.require_passing_tests },
    option: "requirePassingTests",
  }),
  max_cost: setting<number>()({
    flag: {
      name: "max-cost",
      value: "USD",
      description:
        "make no model call once the run's cost (its usage at the model's prices) has reached USD; the run ends cost_limit (exit 8)",
    },
    section: "limits",
    commands: ["run"],
    parse: (text, flag) => dollars(flag, text),
    precedence: ["flag", "request"],
    generic: true,
    request: { field: "limits.max_cost_usd", read: (request) => request.limits?.max_cost_usd },
    option: "maxCost",
  }),
  provider_deadline_ms: setting<number>()({
    flag: { name: "provider-deadline-ms", value: "N", default: String(DEFAULT_DEADLINE_MS), description: DEADLINE },
    section: "limits",
    commands: ["run", "config"],
    parse: (text, flag) => milliseconds(flag, text),
    schema: TimerMs,
    describe: `One model call's deadline, every attempt and wait included; default ${DEFAULT_DEADLINE_MS}`,
    project: true,
    precedence: ["flag", "catalog", "project", "config", "default"],
    shown: "provider",
  }),
  provider_idle_timeout_ms: setting<number>()({
    flag: { name: "provider-idle-timeout-ms", value: "N", default: String(DEFAULT_IDLE_TIMEOUT_MS), description: IDLE },
    section: "limits",
    commands: ["run", "config"],
    parse: (text, flag) => milliseconds(flag, text),
    schema: TimerMs,
    describe: `A model call's attempt fails after this long without a byte; default ${DEFAULT_IDLE_TIMEOUT_MS}`,
    project: true,
    precedence: ["flag", "catalog", "project", "config", "default"],
    shown: "provider",
  }),
  allow_key_host: setting<readonly string[]>()({
    flag: {
      name: "allow-key-host",
      value: "HOST",
      multiple: true,
      description:
        "a catalog's base_url may receive a provider's default key (ANTHROPIC_API_KEY, OPENAI_API_KEY) at this host too",
    },
    section: "limits",
    commands: ["run", "config"],
  }),
  allow_key_env: setting<readonly string[]>()({
    flag: {
      name: "allow-key-env",
      value: "NAME",
      multiple: true,
      description: "a catalog's api_key_env may name this variable (other than the provider's default key variable)",
    },
    section: "limits",
    commands: ["run", "config"],
  }),
  sandbox_network: setting<boolean>()({
    flag: {
      name: "sandbox-network",
      description:
        "network for test and command processes (a request, catalog or recording may ask for it only when you say so)",
    },
    section: "limits",
    commands: ["run", "config"],
  }),
  sandbox_env: setting<readonly string[]>()({
    flag: {
      name: "sandbox-env",
      value: "NAME",
      multiple: true,
      description: "pass this host variable to test and command processes (a file's sandbox.env may name only these)",
    },
    section: "limits",
    commands: ["run", "config"],
  }),
  sandbox_read_only: setting<readonly string[]>()({
    flag: {
      name: "sandbox-read-only",
      value: "PATH",
      multiple: true,
      complete: "folder",
      description: "mount this host path read-only in the sandbox (a file's sandbox.read_only may list only these)",
    },
    section: "limits",
    commands: ["run", "config"],
  }),
} as const;

export type Settings = typeof SETTINGS;
export type SettingKey = keyof Settings;
/** A setting's value type. */
export type ValueOf<K extends SettingKey> = NonNullable<Settings[K]["value"]>;

/** The settings resolved by the one generic rule. */
export type GenericKey = { [K in SettingKey]: Settings[K] extends { generic: true } ? K : never }[SettingKey];
/** The settings with a precedence. */
export type PrecedenceKey = {
  [K in SettingKey]: Settings[K] extends { precedence: readonly Source[] } ? K : never;
}[SettingKey];
/** The settings the user's config file may set. */
export type ConfigKey = { [K in SettingKey]: Settings[K] extends { schema: z.ZodType } ? K : never }[SettingKey];
/** The settings a project's file may set too. */
export type ProjectKey = {
  [K in ConfigKey]: Settings[K] extends { project: true | { describe: string } } ? K : never;
}[ConfigKey];

/** Every key of the table, in its order (Object.keys, typed). */
export const SETTING_KEYS = Object.keys(SETTINGS) as SettingKey[];

/** The table's entries, each as the record type (for code that walks them all). */
export function entryOf(key: SettingKey): Entry<unknown> {
  const written: Written<unknown> = SETTINGS[key];
  return {
    flag: null,
    section: null,
    commands: [],
    env: null,
    schema: null,
    project: false,
    precedence: null,
    shown: null,
    ...written,
  };
}

/** The precedence of every resolved setting, strongest first. */
export const PRECEDENCE = Object.fromEntries(
  SETTING_KEYS.flatMap((key) => {
    const order = entryOf(key).precedence;
    return order === null ? [] : [[key, order]];
  }),
) as { readonly [K in PrecedenceKey]: readonly Source[] };

/** What the command line (or a library caller) said, by setting: enum values are already of their type. */
export type SettingFlags = { [K in SettingKey]?: ValueOf<K> };

/** The setting flags of a command's spec, in the table's order: flag name -> the flag's spec. */
export type SettingFlagsOf<C extends SettingCommand, S extends Section> = {
  [
    K in SettingKey as Settings[K] extends { section: S; commands: readonly (infer Cs)[]; flag: { name: infer N } }
      ? C extends Cs ? N & string : never
      : never
  ]: FlagSpecOf<K>;
};
/** A setting's flag as a spec holds it (without its name). */
type FlagSpecOf<K extends SettingKey> = Settings[K] extends { flag: infer F } ? Omit<F, "name"> : never;

/** A command's setting flags of the given sections, in the table's order; `group` overrides each flag's heading. */
export function settingFlagsOf<C extends SettingCommand, S extends Section>(
  command: C,
  sections: readonly S[],
  { group }: { group?: string } = {},
): SettingFlagsOf<C, S> {
  const flags: Record<string, FlagSpec> = {};
  for (const key of SETTING_KEYS) {
    const entry = entryOf(key);
    if (entry.flag === null || entry.section === null) continue;
    if (!(sections as readonly Section[]).includes(entry.section) || !entry.commands.includes(command)) continue;
    const { name, ...flag } = entry.flag;
    flags[name] = group === undefined ? flag : { ...flag, group };
  }
  // The one cast: the record is built from the table the type is derived from.
  return flags as SettingFlagsOf<C, S>;
}

/** The flag of one setting, by its key (replay and eval pick theirs by name). */
export function flagOf<K extends SettingKey>(key: K): FlagSpecOf<K> {
  const flag = entryOf(key).flag;
  if (flag === null) throw new Error(`${key} has no flag`);
  const { name: _, ...rest } = flag;
  return rest as unknown as FlagSpecOf<K>;
}

/**
 * The setting flags as parsed (values by flag name, as the command line parser gives them) -> the settings they say,
 * each checked by its entry: a bad value is a usage error naming the flag.
 */
export function parseSettingFlags(values: Readonly<Record<string, unknown>>): SettingFlags {
  const flags: Record<string, unknown> = {};
  for (const key of SETTING_KEYS) {
    const entry = entryOf(key);
    const given = entry.flag === null ? undefined : values[entry.flag.name];
    if (given === undefined || entry.flag === null) continue;
    flags[key] = entry.parse && typeof given === "string" ? entry.parse(given, `--${entry.flag.name}`) : given;
  }
  return flags as SettingFlags;
}

/** The user config file's fields, from the table. */
type ConfigShape<K extends SettingKey> = { [P in K]: z.ZodOptional<z.ZodType<ValueOf<P>>> };

/** The user's config file: the settings whose entry has a schema. */
export function configShape(): ConfigShape<ConfigKey> {
  return Object.fromEntries(
    SETTING_KEYS.flatMap((key) => {
      const { schema, describe } = entryOf(key);
      return schema === null ? [] : [[key, described(schema.optional(), describe)]];
    }),
  ) as ConfigShape<ConfigKey>;
}

/** A project's file: the settings its entry lets a project set, with the project's own description if it has one. */
export function projectShape(): ConfigShape<ProjectKey> {
  return Object.fromEntries(
    SETTING_KEYS.flatMap((key) => {
      const { schema, project, describe } = entryOf(key);
      if (schema === null || project === false || typeof project === "string") return [];
      return [[key, described(schema.optional(), project === true ? describe : project.describe)]];
    }),
  ) as ConfigShape<ProjectKey>;
}

function described<S extends z.ZodType>(schema: S, description: string | undefined): S {
  return description === undefined ? schema : schema.describe(description);
}

/** Fields a project's file may not hold, and why (the user's file or a flag may). */
export const USER_ONLY_FIELDS: Readonly<Record<string, string>> = Object.fromEntries(
  SETTING_KEYS.flatMap((key) => {
    const project = entryOf(key).project;
    return typeof project === "string" ? [[key, project]] : [];
  }),
);
