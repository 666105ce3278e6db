// What the loop needs from whatever executes actions: real executors on a workspace, or a recording.
import type { ActionName } from "./actions.ts";
import type { ExecutionReport } from "./reports.ts";

export type ExecuteContext = {
  /** 1-based step number of this execution. */
  step: number;
  /** Aborted on SIGINT/SIGTERM: running processes are killed (whole process group). */
  signal?: AbortSignal;
};

export interface Executor {
  /**
   * Executes one validated action and returns its typed report. Bulk content (file text, process output, printed
   * text) goes into the run's result store; the report carries only references. Anything the action may not do
   * (a path outside the workspace, a command the slice does not allow, an edit whose old text is absent) comes back
   * as a `refusal` report, never as a thrown error. Throws only on interruption or an internal fault.
   */
  execute(action: ActionName, args: Record<string, unknown>, context: ExecuteContext): Promise<ExecutionReport>;
  /** The current revision (`r0` at start). */
  readonly revision: string;
  /** Lines added and removed in the workspace by the last execute; null when unknown (a file not kept as text),
   * undefined when not counted (a recording from before 0.6.0). */
  lines?(): LineChange | null | undefined;
}

/** Lines added and removed by one step. */
export type LineChange = { added: number; removed: number };
