// `bun bench/startup.ts [--runs N]`: how long `loom --version` takes to start, as a ratio to `bun -e 0` (the floor
// any Bun program pays) on the same machine, for the shipped binary (bytecode) and a build without bytecode. Runs
// alternate A B A B … so a drift in the machine's speed hits both sides; the ratio is the median of the pairwise
// ratios. Writes only the section of bench/RESULTS.md between the markers <!-- startup --> and <!-- /startup -->
// (added at the end if missing); `bun run bench` regenerates the rest of the file and keeps that section as it is.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const RESULTS = join(root, "bench/RESULTS.md");
export const START = "<!-- startup -->";
export const END = "<!-- /startup -->";

type Command = { label: string; argv: string[] };

function once({ argv }: Command): number {
  const t0 = performance.now();
  const r = spawnSync(argv[0], argv.slice(1), { encoding: "utf8" });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${argv.join(" ")} exited ${r.status}: ${r.stderr.trim()}`);
  return ms;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

/** Median wall time of `a` and of `b`, and the median of the pairwise ratios a/b, over `runs` alternating pairs. */
export function compare(a: Command, b: Command, runs: number): { a: number; b: number; ratio: number } {
  // Warm-up: page cache, first exec.
  once(a);
  once(b);
  const as: number[] = [];
  const bs: number[] = [];
  for (let i = 0; i < runs; i++) {
    as.push(once(a));
    bs.push(once(b));
  }
  return { a: median(as), b: median(bs), ratio: median(as.map((x, i) => x / bs[i])) };
}

/** Replaces the marked section of `markdown` (or appends it). */
export function withStartupSection(markdown: string, section: string): string {
  const block = `${START}\n${section.trim()}\n${END}`;
  const start = markdown.indexOf(START);
  const end = markdown.indexOf(END);
  if (start >= 0 && end > start) return markdown.slice(0, start) + block + markdown.slice(end + END.length);
  return `${markdown.trimEnd()}\n\n${block}\n`;
}

if (import.meta.main) {
  const at = process.argv.indexOf("--runs");
  const runs = at > 0 ? Number(process.argv[at + 1]) : 31;
  if (!Number.isInteger(runs) || runs < 3) throw new Error("--runs needs a whole number of at least 3");
  const bun = process.execPath;
  const loom = join(root, "dist/loom");
  if (!existsSync(loom)) throw new Error("dist/loom is missing: run `bash compile.sh` first");
  const version = spawnSync(loom, ["--version"], { encoding: "utf8" }).stdout.trim();

  // The same entry point built without bytecode, to show what bytecode buys.
  const dir = mkdtempSync(join(tmpdir(), "loom-startup-"));
  const plain = join(dir, "loom");
  const build = spawnSync(bun, ["build", "--compile", "--minify-syntax", "--outfile", plain, join(root, "main.ts")], {
    encoding: "utf8",
  });
  if (build.status !== 0) throw new Error(`building without bytecode failed: ${build.stderr.trim()}`);

  const floor: Command = { label: "bun -e 0", argv: [bun, "-e", "0"] };
  const shipped = compare({ label: "loom --version", argv: [loom, "--version"] }, floor, runs);
  const noBytecode = compare({ label: "loom --version (no bytecode)", argv: [plain, "--version"] }, floor, runs);
  rmSync(dir, { recursive: true, force: true });

  const ms = (x: number) => `${x.toFixed(1)} ms`;
  const section = [
    "## Start-up",
    "",
    `Written by \`bun bench/startup.ts\` (${runs} alternating pairs after a warm-up, medians; the ratio is the median of`,
    "the pairwise ratios, so it holds when the machine's speed drifts). `bun -e 0` is the floor every Bun program pays.",
    `Binary: \`${version}\`; Bun ${process.versions.bun}, ${process.platform}-${process.arch}, measured ${
      new Date().toISOString().slice(0, 10)
    }.`,
    "",
    "| command | median | bun -e 0 median | ratio to bun -e 0 |",
    "|---|---|---|---|",
    `| \`loom --version\` (shipped: \`--bytecode\`) | ${ms(shipped.a)} | ${ms(shipped.b)} | ${
      shipped.ratio.toFixed(2)
    }× |`,
    `| \`loom --version\` built without bytecode | ${ms(noBytecode.a)} | ${ms(noBytecode.b)} | ${
      noBytecode.ratio.toFixed(2)
    }× |`,
  ].join("\n");
  const before = existsSync(RESULTS) ? readFileSync(RESULTS, "utf8") : "# Benchmark results\n";
  writeFileSync(RESULTS, withStartupSection(before, section));
  process.stderr.write(
    `startup: loom --version ${ms(shipped.a)}, bun -e 0 ${ms(shipped.b)}, ratio ${shipped.ratio.toFixed(2)}×` +
      ` (no bytecode ${noBytecode.ratio.toFixed(2)}×); wrote the marked section of bench/RESULTS.md\n`,
  );
}
