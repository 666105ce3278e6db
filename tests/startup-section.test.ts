// bench/startup.ts owns one marked section of bench/RESULTS.md; the benchmark owns the rest.
import assert from "node:assert/strict";
import { test } from "node:test";
import { END, START, withStartupSection } from "../bench/startup.ts";

test("the start-up section replaces only what is between its markers", () => {
  const before = `# Results\n\nintro\n\n${START}\nold figures\n${END}\n\n## Later\ntext\n`;
  assert.equal(
    withStartupSection(before, "## Start-up\nnew figures\n"),
    `# Results\n\nintro\n\n${START}\n## Start-up\nnew figures\n${END}\n\n## Later\ntext\n`,
  );
});

test("a file without the markers gets the section appended, the rest kept byte for byte", () => {
  const before = "# Results\n\nbody\n\n";
  assert.equal(withStartupSection(before, "figures"), `# Results\n\nbody\n\n${START}\nfigures\n${END}\n`);
  // Markers out of order are not a section: append rather than cut the file.
  const odd = `a ${END} b ${START} c`;
  assert.ok(withStartupSection(odd, "x").startsWith(odd));
});
