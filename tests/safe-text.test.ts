// What Loom prints or writes never carries a URL's password or a raw control character, whoever wrote the text.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { LoomError, StartupError } from "../lib/errors.ts";
import { escapeControl, redactUrlUserinfo, safeMessage } from "../lib/text/safe-text.ts";
import { runLoom } from "./helpers/binary.ts";

test("redactUrlUserinfo hides user and password in every URL, and leaves other @ signs alone", () => {
  assert.equal(
    redactUrlUserinfo(
      "at http://user:PW@host:8080/v1 and https://tok@h/x, mail a@b.c, https://h/p@q, git@github.com:o/r",
    ),
    "at http://***@host:8080/v1 and https://***@h/x, mail a@b.c, https://h/p@q, git@github.com:o/r",
  );
});

test("escapeControl leaves no control character, and printable text as it was", () => {
  assert.equal(escapeControl("a\nb\u001b[31mc\u0007\u2028"), "a\\nb\\e[31mc\\u0007\\u2028");
  fc.assert(fc.property(fc.string({ unit: "binary" }), (text) => {
    // deno-lint-ignore no-control-regex
    assert.doesNotMatch(escapeControl(text), /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/);
  }));
  fc.assert(fc.property(fc.string({ unit: "grapheme-ascii" }), (text) => {
    // deno-lint-ignore no-control-regex
    if (!/[\u0000-\u001f\u007f]/.test(text)) assert.equal(escapeControl(text), text);
  }));
});

test("every LoomError's message and report message are made safe when the error is made", () => {
  const error = new LoomError("x", 'Key "a\nb\u001b[2J" at http://u:secret@h/', { reportMessage: "r\u001b" });
  assert.equal(error.message, safeMessage('Key "a\nb\u001b[2J" at http://u:secret@h/'));
  assert.ok(!error.message.includes("secret") && !error.message.includes("\n") && !error.message.includes("\u001b"));
  assert.equal(error.reportMessage, "r\\e");
  assert.equal(new StartupError("a\rb").message, "a\\rb");
});

test("dist/loom: a catalog key with a newline and an ANSI escape is shown escaped on stderr and in the report", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "loom-control-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const evil = "bad\nkey\u001b[31m";
  writeFileSync(join(dir, "catalog.json"), JSON.stringify({ models: {}, slices: {}, [evil]: 1 }));
  const run = await runLoom(["run", "--catalog", "catalog.json", "x", "--context-report", "report.json"], { cwd: dir });
  assert.equal(run.code, 3, run.stderr);
  assert.equal(run.stderr.trimEnd().split("\n").length, 1, run.stderr);
  assert.ok(!run.stderr.includes("\u001b"));
  const report = readFileSync(join(dir, "report.json"), "utf8");
  assert.ok(!JSON.parse(report).error.message.includes("\u001b"));
  assert.match(report, /bad\\\\nkey\\\\e\[31m/);
});
