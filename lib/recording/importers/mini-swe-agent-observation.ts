// What a mini-swe-agent command printed, as the model saw it, without the agent's own framing: version 1's
// <returncode>/<output> tags and timeout message, version 2's optional <exception> prefix and JSON observation
// ({"returncode": N, "output": "…"}), and version 2's `extra.returncode` / `extra.exception_type` beside the text.
import type { ChatMessage } from "./chat.ts";
import { isRecord } from "./source.ts";

export type Observation = { exit_code: number | null; timed_out: boolean; output: string; framed: boolean };

const OUTPUT = /^<returncode>(-?\d+)<\/returncode>\n<output>\n([\s\S]*)<\/output>$/;
// Long outputs: the agent's warning, then head and tail; kept as the model saw them.
const LONG_OUTPUT = /^<returncode>(-?\d+)<\/returncode>\n([\s\S]*)$/;
const TIMEOUT =
  /^The last command <command>[\s\S]*<\/command> timed out and has been killed\.\nThe output of the command was:\n <output>\n([\s\S]*)\n<\/output>\nPlease try another command and make sure to avoid those requiring interactive input\.$/;
const EXCEPTION = /^<exception>([\s\S]*?)<\/exception>\n(?=<returncode>)/;

/**
 * `framed` says the message is a command's observation (and not, say, the submission the agent echoed back); an
 * unknown template is kept verbatim, with the exit code from `extra` when version 2 logged it.
 */
export function observationOf(reply: ChatMessage): Observation {
  const text = reply.text;
  const extra = reply.extra ?? {};
  const loggedCode = typeof extra.returncode === "number" && Number.isInteger(extra.returncode)
    ? extra.returncode
    : undefined;
  const exceptionInfo = typeof extra.exception_info === "string" ? extra.exception_info : "";
  let timedOut = extra.exception_type === "TimeoutExpired" || /timed out/i.test(exceptionInfo);
  const exception = EXCEPTION.exec(text);
  // the `?? ""` below stand for groups each pattern always captures
  const exceptionLine = exception?.[1] ?? "";
  const body = exception ? text.slice(exception[0].length) : text;
  if (exception && /timed out/i.test(exceptionLine)) timedOut = true;
  // An exception other than a timeout is part of what the model was told about the command.
  const lead = exception && !timedOut ? `${exceptionLine}\n` : "";
  const result = (code: number | null, output: string): Observation => ({
    exit_code: timedOut ? null : loggedCode ?? code,
    timed_out: timedOut,
    output: lead + output,
    framed: true,
  });
  const short = OUTPUT.exec(body);
  if (short) return result(Number(short[1]), short[2] ?? "");
  const long = LONG_OUTPUT.exec(body);
  if (long) return result(Number(long[1]), long[2] ?? "");
  const timeout = TIMEOUT.exec(text);
  if (timeout) return { exit_code: null, timed_out: true, output: timeout[1] ?? "", framed: true };
  const json = jsonObservation(text);
  if (json) {
    if (typeof json.exception_info === "string" && /timed out/i.test(json.exception_info)) timedOut = true;
    const code = typeof json.returncode === "number" && Number.isInteger(json.returncode) ? json.returncode : null;
    // The short form is unwrapped; the long form (head, tail, elided count) stays as the model read it.
    return result(code, typeof json.output === "string" ? json.output : text);
  }
  return {
    exit_code: timedOut ? null : loggedCode ?? null,
    timed_out: timedOut,
    output: text,
    framed: loggedCode !== undefined || timedOut,
  };
}

function jsonObservation(text: string): Record<string, unknown> | undefined {
  if (!text.startsWith("{") || !text.includes('"returncode"')) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) && "returncode" in value ? value : undefined;
  } catch {
    return undefined;
  }
}
