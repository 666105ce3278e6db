// Whether a run's test and command processes ran in an OS sandbox: said in the JSON result, the context report and the
// stream's run-started event, so a run without one is never silent about it (docs/sandbox.md).
import { z } from "zod";

/** The sandbox modes, a floor: auto < required; off only when asked for. The one list of them. */
export const SandboxMode = z.enum(["auto", "required", "off"]);
export type SandboxMode = z.infer<typeof SandboxMode>;

export const SandboxState = z.strictObject({
  mode: SandboxMode.describe(
    "The mode the run used: the floor (--sandbox, else LOOM_SANDBOX, else auto) raised by the slice's sandbox.mode",
  ),
  active: z.boolean().describe("Whether processes really ran in the OS sandbox (false: unsandboxed)"),
  workspace_ignore: z.array(z.string()).describe(
    "The gitignore globs whose changes made no new revision (the slice's workspace_ignore, else the default)",
  ),
}).describe("Where the run's test and command processes ran; null when nothing was executed for real");
export type SandboxState = z.infer<typeof SandboxState>;
