// The agent formats Loom imports: one list, declared here, which the importers, the CLI and the schemas read.
import { z } from "zod";

export const ImportFormat = z
  .enum(["mini-swe-agent", "swe-agent", "openai-messages", "claude-code", "codex"])
  .describe("The agent format a trajectory is imported from");
export type ImportFormat = z.infer<typeof ImportFormat>;
export const IMPORT_FORMATS = ImportFormat.options;

/** The formats read from the file's text, line by line (their refusals name the line). */
export const SESSION_FORMATS = ImportFormat.extract(["claude-code", "codex"]).options;
export type SessionFormat = (typeof SESSION_FORMATS)[number];
