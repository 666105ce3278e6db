// The built-in actions: name, argument schema (the schema is the type) and what the model is told.
import { z } from "zod";
import { FinishStatus } from "./reports.ts";

export const ACTION_NAMES = [
  "read_file",
  "list_files",
  "search",
  "edit_file",
  "write_file",
  "run_tests",
  "run_command",
  "print",
  "finish",
] as const;
export const ActionName = z.enum(ACTION_NAMES);
export type ActionName = z.infer<typeof ActionName>;

const path = z.string().min(1).describe("Path relative to the workspace root");
const includeIgnored = z.boolean().optional().describe(
  "Also files .gitignore excludes, and node_modules (default false)",
);

export const ActionArguments = {
  read_file: z.strictObject({ path }),
  list_files: z.strictObject({
    path: path.describe('Directory relative to the workspace root; "." for the root'),
    include_ignored: includeIgnored,
  }),
  search: z.strictObject({
    query: z.string().min(1).describe("Literal text to find"),
    path: path.describe('File or directory to search; "." for the whole workspace'),
    include_ignored: includeIgnored,
  }),
  edit_file: z.strictObject({
    path,
    old_text: z.string().min(1).describe("Exact text to replace; must occur exactly once"),
    new_text: z.string().describe("Replacement text"),
  }),
  write_file: z.strictObject({ path, content: z.string().describe("The whole new content of the file") }),
  run_tests: z.strictObject({}),
  run_command: z.strictObject({
    argv: z.array(z.string()).min(1).describe("Program and arguments; no shell. Only commands the slice allows run."),
  }),
  print: z.strictObject({ text: z.string().describe("Text to show the user") }),
  finish: z.strictObject({
    status: FinishStatus.describe("Whether the task was accomplished"),
    summary: z.string().describe("What was done, in a few sentences"),
  }),
} satisfies Record<ActionName, z.ZodType>;

export const ACTION_DESCRIPTIONS: Record<ActionName, string> = {
  read_file: "Read a file",
  list_files: "List files under a directory",
  search: "Find literal text in files",
  edit_file: "Replace one exact occurrence of text in a file",
  write_file: "Create or overwrite a file",
  run_tests: "Run the slice's test command",
  run_command: "Run an allowed command (argv, no shell)",
  print: "Show text to the user",
  finish: "End the slice",
};

export type ActionArgs<A extends ActionName> = z.infer<(typeof ActionArguments)[A]>;

/**
 * What a step's action works on, from its arguments: the path, else the command's argv joined (a part that is not
 * text shown as "…"), else a search's query (quoted); null for actions without one. The one rule: the step event's
 * target and the history listing's both come from it.
 */
export function stepTarget(args: Readonly<Record<string, unknown>>): string | null {
  if (typeof args.path === "string") return args.path;
  if (Array.isArray(args.argv)) return args.argv.map((part) => (typeof part === "string" ? part : "…")).join(" ");
  if (typeof args.query === "string") return JSON.stringify(args.query);
  return null;
}

/** An action whose argument schema has no properties skips the arguments phase. */
export function takesArguments(action: ActionName): boolean {
  return Object.keys(ActionArguments[action].shape).length > 0;
}
