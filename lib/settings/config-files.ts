// The config files as Loom reads them: the user's ($XDG_CONFIG_HOME/loom/config.jsonc) and a project's
// (.loom/config.jsonc), their fields derived from the settings table (each setting's schema and description; a
// project's file only the settings its entry allows). Pure.
import { z } from "zod";
import { configShape, projectShape, USER_ONLY_FIELDS } from "./setting-table.ts";

export { USER_ONLY_FIELDS };

export const UserConfig = z.strictObject({
  $schema: z.string().optional().describe("The JSON Schema of this file, for editors (loom schema config)"),
  ...configShape(),
}).describe("Loom's user configuration: defaults below the environment variables and the flags");
export type UserConfig = z.infer<typeof UserConfig>;

/**
 * A project's own settings (`.loom/config.jsonc`, found from the workspace upward): below the flags and the
 * environment, above the user's file. A project's file travels with the code it configures, so it is trusted no
 * further than that code: it can never say where requests and keys go (base URL, key variable), which model gets the
 * workspace, or lower the sandbox; its step limit may only lower the user's (docs/cli.md, "Config files").
 */
export const ProjectConfig = z.strictObject({
  $schema: z.string().optional().describe("The JSON Schema of this file, for editors"),
  ...projectShape(),
}).describe("A project's Loom settings (.loom/config.jsonc): limits and the context policy, nothing that widens a run");
export type ProjectConfig = z.infer<typeof ProjectConfig>;

/** The config file's path: $XDG_CONFIG_HOME/loom/config.jsonc, else ~/.config/loom/config.jsonc; null without either. */
export function configPath(env: Record<string, string | undefined>): string | null {
  const xdg = env.XDG_CONFIG_HOME?.trim();
  if (xdg) return `${xdg.replace(/\/+$/, "")}/loom/config.jsonc`;
  const home = env.HOME?.trim();
  return home ? `${home.replace(/\/+$/, "")}/.config/loom/config.jsonc` : null;
}
