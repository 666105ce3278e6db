// A dependency-free test runner with deterministic output (no timings), so recorded output can be compared.
import { slugify, truncateSlug } from "./src/slug.mjs";

const cases = [
  ["slugify lowercases words", () => slugify("Hello World"), "hello-world"],
  ["slugify collapses punctuation and spaces", () => slugify("Hello,   World!"), "hello-world"],
  ["slugify trims leading and trailing separators", () => slugify("  --Loom 0.4-- "), "loom-0-4"],
  ["truncateSlug keeps short slugs", () => truncateSlug("short-slug", 20), "short-slug"],
  ["truncateSlug cuts at a word boundary", () => truncateSlug("a-long-slug-here", 9), "a-long"],
];

let failed = 0;
cases.forEach(([name, run, expected], i) => {
  const actual = run();
  if (actual === expected) console.log(`ok ${i + 1} - ${name}`);
  else {
    failed++;
    console.log(`not ok ${i + 1} - ${name}\n  expected: ${JSON.stringify(expected)}\n  actual:   ${JSON.stringify(actual)}`);
  }
});
console.log(`${cases.length - failed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
