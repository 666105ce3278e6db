// The refusal an action raises (its code, message and hints), and which file-system failures are refusals the model
// can cause or fix; the workspace executor turns both into refusal reports.
import type { ReportOf } from "../vocabulary/reports.ts";

/** A refusal raised inside an action; execute() turns it into a refusal report. Never leaves the workspace executor. */
export class Refusal extends Error {
  constructor(readonly code: string, message: string, readonly hints: RefusalHints = {}) {
    super(message);
  }
}

/** What a refusal shows of what is there (lib/workspace/refusal-hints.ts). */
export type RefusalHints = Pick<ReportOf<"refusal">, "nearest_lines" | "existing_paths">;

// File-system failures the model can cause or fix, as refusal codes. Anything else is an internal fault.
export const ERRNO_REFUSALS: Record<string, [code: string, what: string]> = {
  ENOENT: ["not_found", "does not exist"],
  ENOTDIR: ["not_a_directory", "goes through a file as if it were a directory"],
  EEXIST: ["not_a_directory", "goes through a file as if it were a directory"],
  EISDIR: ["not_a_file", "is a directory"],
  EACCES: ["permission_denied", "is not accessible"],
  EPERM: ["permission_denied", "is not accessible"],
  ENAMETOOLONG: ["invalid_path", "is too long"],
  ENXIO: ["not_a_file", "is not a regular file"],
  ELOOP: ["path_outside_workspace", "changed while in use (a symlink appeared on the way)"],
  // A write goes to a temporary file renamed over the name, so a full disk leaves the old file whole.
  ENOSPC: ["disk_full", "could not be written: no space left on the device (the file is unchanged)"],
  EDQUOT: ["disk_full", "could not be written: the disk quota is exceeded (the file is unchanged)"],
};
