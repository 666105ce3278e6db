// The one folder walk behind Loom's own output files and the workspace executor's file access (lib/io/dir-handle.ts):
// a link on the way is refused with the caller's error and the path it was reached by, missing folders are made only
// when asked, and no walk leaves a descriptor open, on success or on a refusal.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, sep } from "node:path";
import { descend, openDir, releaseDir } from "../lib/io/dir-handle.ts";

const openDescriptors = () => existsSync("/proc/self/fd") ? readdirSync("/proc/self/fd").length : 0;

function scratch(t: { after: (fn: () => unknown) => void }): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "loom-dir-handle-")));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

class Refused extends Error {}

test("a walk reaches the folder its names lead to, makes missing ones only when asked, and closes what it opened", (t) => {
  const root = scratch(t);
  mkdirSync(join(root, "a"));
  const before = openDescriptors();
  const refused = (shown: string) => new Refused(shown);
  assert.throws(() => descend(openDir(root, { follow: false }), ["a", "b"], { create: false, refused }), {
    code: "ENOENT",
  });
  assert.equal(existsSync(join(root, "a", "b")), false);
  const dir = descend(openDir(root, { follow: false }), ["a", "b", "c"], { create: true, refused });
  assert.equal(dir.path, [root, "a", "b", "c"].join(sep));
  releaseDir(dir);
  assert.equal(existsSync(join(root, "a", "b", "c")), true);
  assert.equal(openDescriptors(), before);
});

test("a link on the way is refused with the caller's error naming the path it was reached by, never followed", (t) => {
  const root = scratch(t);
  const outside = scratch(t);
  mkdirSync(join(root, "a"));
  symlinkSync(outside, join(root, "a", "link"));
  const before = openDescriptors();
  for (const create of [false, true]) {
    assert.throws(
      () =>
        descend(openDir(root, { follow: false }), ["a", "link", "b"], {
          create,
          refused: (shown) => new Refused(shown),
        }),
      (error: unknown) => error instanceof Refused && error.message === [root, "a", "link"].join(sep),
    );
  }
  assert.deepEqual(readdirSync(outside), [], "nothing was made through the link");
  assert.equal(openDescriptors(), before);
});

test("a start that is a link is refused by the open itself (its own error) unless it is followed", (t) => {
  const root = scratch(t);
  const link = join(scratch(t), "link");
  symlinkSync(root, link);
  if (!existsSync("/proc/self/fd")) return; // paths elsewhere: the start is taken as given
  // Linux says ENOTDIR (O_DIRECTORY is checked before O_NOFOLLOW), other kernels ELOOP
  assert.throws(() => openDir(link, { follow: false }), { code: /^(ENOTDIR|ELOOP)$/ });
  const followed = openDir(link, { follow: true });
  assert.notEqual(followed.fd, null);
  releaseDir(followed);
});
