import { test } from "node:test";
import assert from "node:assert/strict";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ChildProcess } from "node:child_process";
import fc from "fast-check";
import { InterruptedError } from "../lib/errors.ts";
import { endingOf } from "../lib/ending.ts";
import { HeadTailBuffer, MAX_OUTPUT_BYTES, processEnv, runProcess, trustedPath } from "../lib/workspace/process.ts";

const MARKER = /\n\[… (\d+) bytes omitted by loom …\]\n/;

function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), "loom-process-"));
  return fn(dir).finally(() => rmSync(dir, { recursive: true, force: true }));
}

/** Alive means running: a killed process whose parent has not reaped it yet (a zombie) counts as gone. */
function isAlive(pid: number): boolean {
  if (existsSync("/proc/self/stat")) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
      return state !== "Z" && state !== "X";
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A killed process may take a moment to be gone: poll for up to two seconds. */
async function isGoneSoon(pid: number): Promise<boolean> {
  for (let i = 0; i < 200; i++) {
    if (!isAlive(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return false;
}

async function waitForFile(path: string): Promise<string> {
  for (let i = 0; i < 500; i++) {
    if (existsSync(path)) {
      const text = readFileSync(path, "utf8");
      if (text.endsWith("\n")) return text.trim();
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`${path} never appeared`);
}

// Starts a background grandchild, records its pid, then waits on it: only a group kill ends it.
const grandchildScript = (pidFile: string) => `sleep 100 & echo $! > '${pidFile}'; wait`;

test("runProcess reports the exit status and combines stdout and stderr in the order written", async () => {
  const result = await runProcess({
    argv: ["sh", "-c", "echo one; sleep 0.1; echo two >&2; sleep 0.1; echo three; exit 3"],
    cwd: tmpdir(),
    timeoutMs: 30_000,
  });
  assert.equal(result.exitCode, 3);
  assert.equal(result.timedOut, false);
  assert.equal(result.output, "one\ntwo\nthree\n");
});

test("runProcess runs without a shell: arguments are passed literally", async () => {
  const result = await runProcess({ argv: ["printf", "%s|", "$HOME", "a b", "*"], cwd: tmpdir(), timeoutMs: 30_000 });
  assert.equal(result.exitCode, 0);
  assert.equal(result.output, "$HOME|a b|*|");
});

test("runProcess runs in the given working directory and decodes UTF-8", async () => {
  await withTempDir(async (dir) => {
    const result = await runProcess({
      argv: ["sh", "-c", "pwd; printf 'h\\303\\251llo \\342\\234\\223\\n'"],
      cwd: dir,
      timeoutMs: 30_000,
    });
    assert.equal(result.output, `${realpathSync(dir)}\nhéllo ✓\n`);
  });
});

test("runProcess resolves a missing program with exit code 127 and one line of output", async () => {
  const result = await runProcess({ argv: ["loom-no-such-program"], cwd: tmpdir(), timeoutMs: 30_000 });
  assert.equal(result.exitCode, 127);
  assert.equal(result.timedOut, false);
  assert.match(result.output, /^Cannot run "loom-no-such-program": program not found\n$/);
});

test("runProcess resolves a missing working directory with exit code 127", async () => {
  const result = await runProcess({ argv: ["true"], cwd: join(tmpdir(), "loom-no-such-dir-7f3a"), timeoutMs: 30_000 });
  assert.equal(result.exitCode, 127);
  assert.match(result.output, /working directory .* does not exist\n$/);
});

test("runProcess measures duration with the injected clock", async () => {
  let t = 1_000;
  const result = await runProcess({ argv: ["true"], cwd: tmpdir(), timeoutMs: 30_000 }, {
    now: () => (t += 250) - 250,
  });
  assert.equal(result.durationMs, 250);
});

test("a timeout kills the whole process group, grandchildren included", async () => {
  await withTempDir(async (dir) => {
    const pidFile = join(dir, "grandchild.pid");
    const result = await runProcess({ argv: ["sh", "-c", grandchildScript(pidFile)], cwd: dir, timeoutMs: 300 });
    assert.equal(result.timedOut, true);
    assert.equal(result.exitCode, null);
    const pid = Number(await waitForFile(pidFile));
    assert.ok(pid > 0);
    assert.equal(await isGoneSoon(pid), true);
  });
});

test("processes left in the background are killed when the command exits", async () => {
  await withTempDir(async (dir) => {
    const pidFile = join(dir, "grandchild.pid");
    // The shell exits at once; its background sleep still holds the output pipe.
    const result = await runProcess({
      argv: ["sh", "-c", `sleep 100 & echo $! > '${pidFile}'; echo done`],
      cwd: dir,
      timeoutMs: 60_000,
    });
    assert.equal(result.exitCode, 0);
    assert.equal(result.timedOut, false);
    assert.equal(result.output, "done\n");
    assert.equal(await isGoneSoon(Number(await waitForFile(pidFile))), true);
  });
});

/**
 * A reader slower than any timer: the output streams of every process spawned while `fn` runs hold back their events
 * (data, end, close) until `delayMs` after the process exits, as a loop too busy to read the pipes would. The bytes wait
 * in the pipe meanwhile, exactly where a loaded machine leaves them.
 */
async function withSlowReader<T>(delayMs: number, fn: () => Promise<T>): Promise<T> {
  const emit = ChildProcess.prototype.emit;
  ChildProcess.prototype.emit = function (this: ChildProcess, event: string | symbol, ...args: unknown[]) {
    const streams = [this.stdout, this.stderr].flatMap((stream) => (stream ? [stream] : []));
    // "spawn" comes before any of the child's output can be read.
    if (event === "spawn") streams.forEach(holdBack);
    if (event === "exit") setTimeout(() => streams.forEach((stream) => releases.get(stream)?.()), delayMs);
    return Reflect.apply(emit, this, [event, ...args]) as boolean;
  } as typeof emit;
  const releases = new Map<NodeJS.EventEmitter, () => void>();
  const holdBack = (stream: NodeJS.EventEmitter) => {
    const own = stream.emit.bind(stream);
    const held: [string | symbol, unknown[]][] = [];
    let holding = true;
    stream.emit =
      ((name: string | symbol, ...rest: unknown[]) =>
        holding ? held.push([name, rest]) > 0 : own(name, ...rest)) as typeof stream.emit;
    releases.set(stream, () => {
      holding = false;
      for (const [name, rest] of held) own(name, ...rest);
    });
  };
  try {
    return await fn();
  } finally {
    ChildProcess.prototype.emit = emit;
  }
}

// ~29 KB, the size of the evaluation's clue task output that a loaded machine was seen to cut to ~26 KB.
const LINES = Array.from({ length: 2_500 }, (_, i) => `ok ${i + 1} - line of the test output\n`).join("");

test("every byte the command wrote before it exited is kept, however long the reader takes to get to it", async () => {
  await withTempDir(async (dir) => {
    const result = await withSlowReader(1_500, () =>
      runProcess({
        argv: ["node", "-e", `process.stdout.write(${JSON.stringify(LINES)}); process.stderr.write("# done\\n")`],
        cwd: dir,
        timeoutMs: 60_000,
      }));
    assert.equal(result.exitCode, 0);
    assert.equal(result.timedOut, false);
    // Both pipes are read to their end; stdout's and stderr's order is the reader's, so only the sum is fixed.
    assert.equal(result.output.length, LINES.length + "# done\n".length, "bytes kept");
    assert.ok(result.output.includes(LINES), "stdout is whole, in order");
    assert.ok(result.output.includes("# done\n"), "stderr is whole");
  });
});

test(
  "a process that escaped the kill and holds the output open: the step ends at the command's exit with all it wrote",
  { timeout: 600_000 },
  async () => {
    await withTempDir(async (dir) => {
      const pidFile = join(dir, "holder.pid");
      // A new session and an empty environment: neither the group kill nor the process token reaches it. The command
      // waits until the holder is in its session (it writes its pid from there), then writes its output and exits.
      const script = `setsid env -i /bin/sh -c 'echo $$ > "$1"; exec "$0" 1000' "$(command -v sleep)" '${pidFile}' & ` +
        `while [ ! -s '${pidFile}' ]; do sleep 0.01; done; cat lines.txt`;
      writeFileSync(join(dir, "lines.txt"), LINES);
      let pid = 0;
      try {
        const result = await runProcess({ argv: ["sh", "-c", script], cwd: dir, timeoutMs: 60_000 });
        pid = Number(await waitForFile(pidFile));
        assert.equal(isAlive(pid), true, "the holder escaped, as it meant to");
        assert.equal(result.exitCode, 0);
        assert.equal(result.timedOut, false);
        // The output is a file, not a pipe the holder keeps open: nothing is waited for after the command's exit.
        assert.ok(result.output === LINES, `kept ${result.output.length} of ${LINES.length} bytes`);
      } finally {
        if (pid === 0 && existsSync(pidFile)) pid = Number(readFileSync(pidFile, "utf8"));
        if (pid > 0) process.kill(pid, "SIGKILL");
      }
    });
  },
);

test("an abort kills the process group and rejects with InterruptedError", async () => {
  await withTempDir(async (dir) => {
    const pidFile = join(dir, "grandchild.pid");
    const controller = new AbortController();
    const running = runProcess({ argv: ["sh", "-c", grandchildScript(pidFile)], cwd: dir, timeoutMs: 60_000 }, {
      signal: controller.signal,
    });
    const pid = Number(await waitForFile(pidFile));
    assert.equal(isAlive(pid), true);
    controller.abort();
    await assert.rejects(
      running,
      (error: unknown) => error instanceof InterruptedError && endingOf({ threw: error }).exitCode === 130,
    );
    assert.equal(await isGoneSoon(pid), true);
  });
});

test("an already aborted signal rejects without starting the program", async () => {
  await withTempDir(async (dir) => {
    const marker = join(dir, "started");
    const controller = new AbortController();
    controller.abort();
    await assert.rejects(
      runProcess({ argv: ["sh", "-c", `touch '${marker}'`], cwd: dir, timeoutMs: 30_000 }, {
        signal: controller.signal,
      }),
      InterruptedError,
    );
    assert.equal(existsSync(marker), false);
  });
});

test("runaway output is capped at 2 MiB, keeping head and tail around a one-line marker", async () => {
  const body = 3_000_000;
  const result = await runProcess({
    argv: ["sh", "-c", `echo START; head -c ${body} /dev/zero | tr '\\0' a; echo; echo END`],
    cwd: tmpdir(),
    timeoutMs: 60_000,
  });
  assert.equal(result.exitCode, 0);
  const bytes = new TextEncoder().encode(result.output).length;
  assert.ok(bytes <= MAX_OUTPUT_BYTES, `${bytes} bytes`);
  assert.ok(result.output.startsWith("START\naaaa"));
  assert.ok(result.output.endsWith("aaaa\nEND\n"));
  const match = MARKER.exec(result.output);
  assert.ok(match, "marker present");
  const total = "START\n".length + body + "\nEND\n".length;
  assert.equal(bytes - new TextEncoder().encode(match[0]).length + Number(match[1]), total);
});

test("HeadTailBuffer keeps a prefix and a suffix on character boundaries and counts every omitted byte", () => {
  fc.assert(
    fc.property(
      fc.string({ unit: "grapheme", maxLength: 200 }),
      fc.array(fc.nat(40), { maxLength: 20 }),
      fc.integer({ min: 64, max: 400 }),
      (text, cuts, cap) => {
        const bytes = new TextEncoder().encode(text);
        const buffer = new HeadTailBuffer(cap);
        let offset = 0;
        for (const cut of cuts) {
          buffer.push(bytes.subarray(offset, offset + cut));
          offset = Math.min(bytes.length, offset + cut);
        }
        buffer.push(bytes.subarray(offset));
        const out = buffer.text();
        const match = MARKER.exec(out);
        if (!match) {
          assert.equal(out, text);
          return;
        }
        const head = out.slice(0, match.index);
        const tail = out.slice(match.index + match[0].length);
        assert.ok(text.startsWith(head) && text.endsWith(tail));
        const size = (s: string) => new TextEncoder().encode(s).length;
        assert.equal(size(head) + Number(match[1]) + size(tail), bytes.length);
        assert.ok(size(out) <= cap, `${size(out)} > ${cap}`);
      },
    ),
  );
});

test("processEnv passes only the allow-list and the names given: innocent names and URL passwords stay out", () => {
  const env = processEnv({
    PATH: "/bin",
    HOME: "/home/me",
    LANG: "C.UTF-8",
    LC_ALL: "C",
    TZ: "UTC",
    SENTRY_DSN: "https://k@o1.ingest.sentry.io/1",
    SLACK_WEBHOOK_URL: "https://hooks.slack.com/services/T/B/x",
    STRIPE_SK: "sk_live_x",
    DATABASE_URL: "postgres://app:hunter2@db/app",
    GIT_AUTHOR_NAME: "Loom",
    NODE_OPTIONS: "--max-old-space-size=64",
    UNSET: undefined,
  }, { pass: ["GIT_AUTHOR_NAME", "UNSET"], sandboxed: false });
  assert.deepEqual(env, {
    PATH: "/bin",
    HOME: "/home/me",
    LANG: "C.UTF-8",
    LC_ALL: "C",
    TZ: "UTC",
    GIT_AUTHOR_NAME: "Loom",
  });
});

test("processEnv gives a sandboxed child the sandbox's own HOME and TMPDIR, never the host's", () => {
  const env = processEnv({ PATH: "/bin", HOME: "/home/me", TMPDIR: "/var/tmp/me" }, { sandboxed: true });
  assert.deepEqual(env, { PATH: "/bin", HOME: "/tmp/home", TMPDIR: "/tmp" });
});

test("processEnv never passes a removed name, even when the slice names it", () => {
  const env = processEnv({ PATH: "/bin", LOOM_MODEL_ACCESS: "sk-1", LOOM_MODEL: "m" }, {
    pass: ["LOOM_MODEL_ACCESS", "LOOM_MODEL"],
    remove: ["LOOM_MODEL_ACCESS"],
    sandboxed: false,
  });
  assert.deepEqual(env, { PATH: "/bin", LOOM_MODEL: "m" });
});

test("runProcess passes the named variables and keeps the rest of the environment from the child", async () => {
  const result = await runProcess(
    { argv: ["sh", "-c", "env"], cwd: tmpdir(), timeoutMs: 30_000 },
    {
      env: { PATH: process.env.PATH, LOOM_MODEL_ACCESS: "sk-named-secret", LOOM_VISIBLE: "yes", OTHER: "hidden" },
      passEnv: ["LOOM_VISIBLE"],
      removeEnv: ["LOOM_MODEL_ACCESS"],
    },
  );
  assert.match(result.output, /^LOOM_VISIBLE=yes$/m);
  assert.doesNotMatch(result.output, /LOOM_MODEL_ACCESS|sk-named-secret|OTHER|hidden/);
});

test("the default environment is process.env, reduced to the allow-list", async () => {
  const saved = process.env.LOOM_TEST_API_KEY;
  process.env.LOOM_TEST_API_KEY = "sk-do-not-leak";
  process.env.LOOM_TEST_VISIBLE = "yes";
  try {
    const result = await runProcess({ argv: ["sh", "-c", "env"], cwd: tmpdir(), timeoutMs: 30_000 }, {
      passEnv: ["LOOM_TEST_VISIBLE"],
    });
    assert.match(result.output, /^LOOM_TEST_VISIBLE=yes$/m);
    assert.doesNotMatch(result.output, /LOOM_TEST_API_KEY|sk-do-not-leak/);
  } finally {
    if (saved === undefined) delete process.env.LOOM_TEST_API_KEY;
    else process.env.LOOM_TEST_API_KEY = saved;
    delete process.env.LOOM_TEST_VISIBLE;
  }
});

test("trustedPath keeps, in order, exactly the absolute PATH entries outside the workspace (as written and real)", () => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "loom-path-")));
  try {
    const ws = join(base, "ws");
    mkdirSync(join(ws, "node_modules/.bin"), { recursive: true });
    mkdirSync(join(base, "tools"));
    symlinkSync(join(base, "tools"), join(ws, "link-out")); // in the workspace, pointing out: dropped
    symlinkSync(ws, join(base, "link-in")); // outside, pointing in: dropped
    const kept = ["/usr/bin", "/bin", join(base, "tools"), "/nonexistent/bin"];
    const dropped = [
      "node_modules/.bin",
      ".",
      "",
      "bin",
      ws,
      join(ws, "node_modules/.bin"),
      join(ws, "link-out"),
      join(base, "link-in"),
      join(base, "link-in", "node_modules/.bin"),
    ];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...kept, ...dropped), { maxLength: 12 }), (entries) => {
        const out = trustedPath(entries.join(":"), [ws]);
        assert.deepEqual(out === "" ? [] : out.split(":"), entries.filter((entry) => kept.includes(entry)));
      }),
    );
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});
