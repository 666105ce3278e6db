import type { StopReason } from "../../vocabulary/turn.ts";

export function mapAnthropicStopReason(reason: unknown): StopReason {
  switch (reason) {
    case "end_turn":
    case "stop_sequence":
      return "end";
    case "max_tokens":
    case "model_context_window_exceeded":
      return "max_tokens";
    case "tool_use":
      return "tool_use";
    case "refusal":
      return "refusal";
    default:
      return "other";
  }
}
