// Builders for the attack tests: a workspace beside an "outside" directory holding a secret, recordings that drive the
// binary through `loom replay --execute`, and a scan of /proc for processes that outlived a run.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findBubblewrap } from "../../lib/workspace/sandbox.ts";
import { type ActionName, takesArguments } from "../../lib/vocabulary/actions.ts";
import type { ExecutionReport } from "../../lib/vocabulary/reports.ts";
import type { SliceRequest } from "../../lib/slice.ts";

/**
 * Why the sandbox tests cannot run here, or null when bubblewrap works (CI installs it). `LOOM_BWRAP=/nonexistent`
 * runs the suite as a machine without bubblewrap: every case that needs the OS sandbox then says "not protected".
 */
export function sandboxMissing(): string | null {
  const probe = findBubblewrap();
  return probe.found ? null : `not protected without an OS sandbox (${probe.reason})`;
}

export type Arena = { dir: string; workspace: string; outside: string; secret: string };

export const SECRET_TEXT = "outside secret: do not read\n";

/** A temporary directory with `ws/` (the workspace) and `outside/secret.txt` next to it. */
export function makeArena(files: Record<string, string> = {}): Arena {
  const dir = mkdtempSync(join(tmpdir(), "loom-attack-"));
  const workspace = join(dir, "ws");
  const outside = join(dir, "outside");
  mkdirSync(workspace);
  mkdirSync(outside);
  writeFileSync(join(outside, "secret.txt"), SECRET_TEXT);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(workspace, path, ".."), { recursive: true });
    writeFileSync(join(workspace, path), content);
  }
  return { dir, workspace, outside, secret: join(outside, "secret.txt") };
}

/** What `outside/` holds: every name and content, to compare before and after an attack. */
export function outsideState(arena: Arena): string {
  return readdirSync(arena.outside).sort().map((name) => {
    const path = join(arena.outside, name);
    return `${name}:${existsSync(path) ? readFileSync(path, "utf8") : "?"}`;
  }).join("|");
}

type Step = { action: string; args: Record<string, unknown>; report?: ExecutionReport };

const NO_USAGE = { input: null, cache_read: null, cache_write: null, output: null };

/**
 * A recording for `loom replay --execute`: the given steps, then finish. Recorded reports are placeholders (a replay
 * that executes for real reports what happened; only the effects are checked).
 */
export function recordingOf(slice: Omit<SliceRequest, "workspace">, steps: Step[]): string {
  const lines: unknown[] = [{ type: "header", format: "loom-recording", version: 1, slice }];
  const all = [...steps, { action: "finish", args: { status: "success", summary: "done" } }];
  all.forEach(({ action, args, report }, i) => {
    const step = i + 1;
    lines.push({ type: "answer", phase: "selection", step, value: { action }, usage: NO_USAGE });
    if (takesArguments(action as ActionName)) {
      lines.push({ type: "answer", phase: "arguments", step, value: args, usage: NO_USAGE });
    }
    const recorded = report ??
      (action === "finish"
        ? { kind: "finish", ...args }
        : { kind: "refusal", step, code: "placeholder", reason: "placeholder" });
    lines.push({ type: "execution", step, action, args, report: recorded, results: {} });
  });
  return lines.map((line) => JSON.stringify(line)).join("\n") + "\n";
}

export function attackSlice(overrides: Partial<SliceRequest> = {}): Omit<SliceRequest, "workspace"> {
  return {
    intent: "Attack",
    instructions: "Attack",
    actions: ["read_file", "edit_file", "write_file", "run_tests", "run_command", "finish"],
    test: { command: ["sh", "-c", "exit 0"], timeout_ms: 60_000 },
    model: "test/model",
    limits: { max_steps: 5_000 },
    commands: [["sh", "-c"]],
    sandbox: { mode: "required" },
    ...overrides,
  };
}

/** Host pids of processes whose command line contains `marker`. */
export function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, "utf8");
      const state = readFileSync(`/proc/${name}/stat`, "utf8");
      if (cmdline.includes(marker) && state.slice(state.lastIndexOf(")") + 2)[0] !== "Z") found.push(Number(name));
    } catch { /* gone */ }
  }
  return found;
}

/**
 * A shell script that leaves seven kinds of process behind, each a `sleep` whose duration carries `marker` (so the
 * host can find it): setsid, a double fork, os.setpgrp(), nohup, setsid --fork, a daemon (fork, setsid, fork) and one
 * that ignores SIGINT, SIGTERM and SIGHUP. Then it waits.
 */
export function orphanScript(marker: string): string {
  const sleep = (n: number) => `sleep 3000.${marker}${n}`;
  const py = (code: string) => `python3 -c '${code}'`;
  return [
    `setsid ${sleep(1)} >/dev/null 2>&1 &`,
    `( ${sleep(2)} >/dev/null 2>&1 & ) &`,
    `${py(`import os, subprocess; os.setpgrp(); subprocess.Popen(["sleep", "3000.${marker}3"])`)} >/dev/null 2>&1 &`,
    `nohup ${sleep(4)} >/dev/null 2>&1 &`,
    `setsid -f ${sleep(5)} >/dev/null 2>&1`,
    `${
      py(
        `import os\nif os.fork() == 0:\n os.setsid()\n if os.fork() == 0:\n  os.execvp("sleep", ["sleep", "3000.${marker}6"])`,
      )
    } >/dev/null 2>&1`,
    `sh -c 'trap "" INT TERM HUP; ${sleep(7)}' >/dev/null 2>&1 &`,
    "echo started",
    "sleep 3600",
  ].join("\n");
}
