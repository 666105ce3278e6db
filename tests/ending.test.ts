// Each ending is decided once: endingOf maps what happened to the outcome, the error code and the exit code, and no
// other module picks an exit code from the table or maps an error to an outcome.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { endingOf, type Happened, INTERNAL_ERROR } from "../lib/ending.ts";
import {
  BudgetError,
  InterruptedError,
  LoomError,
  ProviderError,
  RecordingError,
  RoutingError,
  StartupError,
  UsageError,
} from "../lib/errors.ts";
import { EXIT_CODES, Outcome } from "../lib/outcome.ts";
import { Reporter } from "../commands/reporter.ts";
import { fakeIo } from "./helpers/fake-io.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

test("what was thrown before a run: usage 2, startup and routing 3, interrupt 130, a bug internal_error", () => {
  const cases: [unknown, string, Outcome, string | null, number][] = [
    [new UsageError("bad flag"), "usage", "startup_failed", "usage", 2],
    [new RecordingError("bad line"), "usage", "startup_failed", "recording_invalid", 2],
    [new StartupError("no key", "missing_credential"), "startup_failed", "startup_failed", "missing_credential", 3],
    [new RoutingError("no route"), "routing_failed", "routing_failed", "routing_failed", 3],
    [new InterruptedError(), "interrupted", "interrupted", "interrupted", 130],
    [new ProviderError("503", { code: "provider_unavailable" }), "failed", "failed", "provider_unavailable", 1],
    [new TypeError("x is undefined"), "internal_error", "failed", INTERNAL_ERROR, EXIT_CODES.internal_error],
    ["a thrown string", "internal_error", "failed", INTERNAL_ERROR, EXIT_CODES.internal_error],
  ];
  for (const [threw, ending, outcome, code, exitCode] of cases) {
    assert.deepEqual(endingOf({ threw }), { ending, outcome, code, exitCode }, String(threw));
  }
});

test("inside a run every error but an interrupt fails it; a bug is an internal error; an abort wins", () => {
  const inRun = (threw: unknown, aborted = false) => endingOf({ threw, inRun: true, aborted });
  assert.equal(inRun(new RecordingError("diverged")).outcome, "failed");
  assert.equal(inRun(new RecordingError("diverged")).exitCode, 1);
  assert.equal(inRun(new BudgetError("context_ceiling_exceeded", "over")).code, "context_ceiling_exceeded");
  assert.equal(inRun(new RangeError("bug")).ending, "internal_error");
  assert.equal(inRun(new RangeError("bug"), true).ending, "interrupted");
  assert.equal(inRun(new ProviderError("reset"), true).exitCode, 130);
});

test("a run that got to its end: its outcome's code; a bug's error code, an unwritten report and a divergence", () => {
  assert.deepEqual(endingOf({ ran: "completed" }), {
    ending: "completed",
    outcome: "completed",
    code: null,
    exitCode: 0,
  });
  assert.equal(endingOf({ ran: "step_limit", errorCode: "step_limit" }).exitCode, 6);
  assert.equal(endingOf({ ran: "suspended" }).exitCode, 4);
  assert.equal(endingOf({ ran: "failed", errorCode: INTERNAL_ERROR }).ending, "internal_error");
  assert.equal(endingOf({ ran: "completed", reportUnwritten: true }).exitCode, 1);
  assert.equal(endingOf({ ran: "completed", reportUnwritten: true }).code, "report_unwritable");
  assert.equal(endingOf({ ran: "completed", diverged: true }).ending, "diverged");
  assert.equal(
    endingOf({ ran: "invalid_answers", diverged: true }).ending,
    "invalid_answers",
    "only a completed run diverges",
  );
});

test("every ending's exit code is the table's, and every error class keeps its code", () => {
  const errors = fc.oneof(
    fc.string().map((m) => new UsageError(m)),
    fc.string().map((m) => new StartupError(m)),
    fc.string().map((m) => new RoutingError(m)),
    fc.string().map((m) => new InterruptedError(m)),
    fc.tuple(fc.string(), fc.string({ minLength: 1 })).map(([m, code]) => new LoomError(code, m)),
    fc.string().map((m) => new Error(m)),
    fc.anything(),
  );
  const happened: fc.Arbitrary<Happened> = fc.oneof(
    fc.record({ threw: errors, aborted: fc.boolean(), inRun: fc.boolean() }),
    fc.record({
      ran: fc.constantFrom(...Outcome.options),
      errorCode: fc.option(fc.constantFrom("step_limit", INTERNAL_ERROR, "provider_error")),
      reportUnwritten: fc.boolean(),
      diverged: fc.boolean(),
    }),
  );
  fc.assert(fc.property(happened, (h) => {
    const ended = endingOf(h);
    assert.equal(ended.exitCode, EXIT_CODES[ended.ending]);
    if ("threw" in h && h.threw instanceof LoomError && ended.ending !== "interrupted") {
      assert.equal(ended.code, h.threw.code);
    }
    if ("threw" in h && h.aborted) assert.equal(ended.ending, "interrupted");
  }));
});

function modulesUnder(path: string): string[] {
  const full = join(ROOT, path);
  if (!statSync(full).isDirectory()) return path.endsWith(".ts") ? [path] : [];
  return readdirSync(full).flatMap((name) => modulesUnder(join(path, name)));
}

test("no module but lib/ending.ts picks an exit code from the table or reads one off an error", () => {
  const strip = (s: string) => s.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");
  const allowed = new Set<string>();
  const found = ["main.ts", "api.ts", "commands", "lib"].flatMap(modulesUnder)
    .filter((path) => path !== "lib/ending.ts" && path !== "lib/outcome.ts")
    .flatMap((path) =>
      [
        ...strip(readFileSync(join(ROOT, path), "utf8")).matchAll(
          /EXIT_CODES\s*(\[[^\]]*\]|\.\w+)|\berror\.exitCode\b/g,
        ),
      ]
        .map((m) => `${path}: ${m[0]}`)
    )
    .filter((site) => !allowed.has(site));
  assert.deepEqual(found, []);
});

test("a bug outside a run is said through the reporter: one stderr line and, for JSON, a result object", () => {
  const { io, out } = fakeIo({ cwd: ROOT });
  const code = new Reporter(io, { command: "run", format: "json" }).thrown(new TypeError("x is undefined"));
  assert.equal(code, EXIT_CODES.internal_error);
  const result = JSON.parse(out.stdout);
  assert.deepEqual([result.type, result.outcome, result.exit_code, result.error.code], [
    "result",
    "internal_error",
    EXIT_CODES.internal_error,
    "internal_error",
  ]);
  assert.equal(out.stderr, "loom run: internal error: x is undefined\n");
  const interrupted = fakeIo({ cwd: ROOT });
  assert.equal(new Reporter(interrupted.io, { command: "run", format: "json" }).thrown(new InterruptedError()), 130);
  assert.equal(JSON.parse(interrupted.out.stdout).outcome, "interrupted");
});
