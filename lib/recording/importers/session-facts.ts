// What an agent session file says beyond the steps a recording keeps: the model, where the agent compacted its own
// context, what the provider billed per model call, and what was left out. Never prompt or file content.
import type { Usage } from "../../vocabulary/turn.ts";
import type { Recording } from "../recording.ts";
import type { SessionFormat } from "./import-format.ts";

export type SessionFacts = {
  format: SessionFormat;
  /** The model the session used most (the file's own id, e.g. "claude-opus-4-6"); "unknown" when none is named. */
  model: string;
  /** A subagent's (side chain's) own session file. */
  subagent: boolean;
  /** Lines where the agent compacted its context (Claude Code compact_boundary, Codex compacted), in file order. */
  compactions: number[];
  /** For each compaction, how many of the calls in `usages` came before it. */
  compaction_calls: number[];
  /**
   * The usage the provider reported for each model call, in order (Claude Code: one per assistant message id, each
   * counter the largest of the lines that repeat the message; Codex: one per token_count event that moved the total).
   */
  usages: Usage[];
  /** The model of each call in `usages` (a session may switch models). */
  call_models: string[];
  /** The step of the recording that each call in `usages` answered (null: a call with no step, e.g. a compaction). */
  call_steps: (number | null)[];
  /** Side-chain lines inside a main session file, left out (they are the subagent's, not this session's turns). */
  skipped_sidechain_lines: number;
  /** User prompts after the first (the task): the recording has no event for them. */
  later_prompts: number;
};

export type ImportedSession = { recording: Recording; facts: SessionFacts };
