import type { StopReason } from "../../vocabulary/turn.ts";

export function mapOpenAIStopReason(reason: unknown, { refused = false }: { refused?: boolean } = {}): StopReason {
  if (refused) return "refusal";
  switch (reason) {
    case "stop":
      return "end";
    case "length":
      return "max_tokens";
    case "tool_calls":
    case "function_call":
      return "tool_use";
    case "content_filter":
      return "refusal";
    default:
      return "other";
  }
}
