// An Io for running commands in-process: captures stdout and stderr, answers stdin from a string.
import type { Io } from "../../commands/io.ts";
import { SANDBOX_ENV } from "./binary.ts";

export function fakeIo(
  { cwd, env = {}, stdin = "", signal = new AbortController().signal }: {
    cwd: string;
    env?: Record<string, string | undefined>;
    stdin?: string;
    signal?: AbortSignal;
  },
): { io: Io; out: { stdout: string; stderr: string } } {
  const out = { stdout: "", stderr: "" };
  const io: Io = {
    stdout: (text) => void (out.stdout += text),
    stderr: (text) => void (out.stderr += text),
    readStdin: () => Promise.resolve(stdin),
    env: { ...SANDBOX_ENV, ...env },
    cwd,
    isTTY: false,
    signal,
  };
  return { io, out };
}
