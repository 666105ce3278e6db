// `loom report --html`: one self-contained page with the charts, checked as markup and as rendered by headless Chromium.
import type { ContextPolicyName } from "../lib/policy.ts";
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { main } from "../main.ts";
import type { Io } from "../commands/io.ts";
import { aggregateReports, type ContextReport, ReportBuilder } from "../lib/context-report.ts";
import { renderReportHtml, SERIES_COLORS } from "../lib/report-html.ts";
import type { NamedReport } from "../lib/report-load.ts";
import { countColor, dumpDom, findChromium, readPng, screenshot } from "./helpers/chromium.ts";

const ARTIFACTS = fileURLToPath(new URL("./artifacts/", import.meta.url));

/** A run of `steps` steps (two calls each) whose requests grow; bounded retires back to ~31 KiB past 48 KiB. */
function simulated(policy: ContextPolicyName, steps: number, { growth = 2600 } = {}): ContextReport {
  const b = new ReportBuilder({ policy, version: "0.4.0" });
  let bytes = 6000;
  for (let step = 1; step <= steps; step++) {
    b.recordStep(step);
    let checkpoint = false;
    if (policy === "bounded" && bytes > 49_152) {
      bytes = 31_000 + (step % 3) * 500;
      checkpoint = true;
      b.recordCheckpoint({ retired: 20 });
    }
    const usage = { input: Math.round(bytes / 4), cache_read: null, cache_write: null, output: 40 };
    b.recordCall({ phase: "selection", step, request_bytes: bytes, elapsed_ms: 700, usage, checkpoint, lookup: false });
    b.recordCall({
      phase: "arguments",
      step,
      request_bytes: bytes + 800,
      elapsed_ms: 500,
      usage,
      checkpoint: false,
      lookup: false,
    });
    b.recordExecution(250);
    bytes += growth + (step % 4) * 500;
  }
  return b.finish({ outcome: "completed", totalElapsedMs: steps * 1450 });
}

const named = (file: string, report: ContextReport): NamedReport => ({ file, kind: "run", report });

type Tag = { name: string; attrs: Record<string, string> };

/** The opening tags of one element name, with their attributes (enough for markup we generate ourselves). */
function tags(html: string, name: string): Tag[] {
  return [...html.matchAll(new RegExp(`<${name}\\b([^>]*)>`, "g"))].map((m) => ({
    name,
    attrs: Object.fromEntries([...m[1].matchAll(/([\w:-]+)="([^"]*)"/g)].map((a) => [a[1], a[2]])),
  }));
}

function chartPolylines(html: string, chartId: string): Tag[] {
  return tags(html, "polyline").filter((t) => t.attrs.id?.startsWith(`${chartId}-series-`));
}

function pointCount(polyline: Tag): number {
  return polyline.attrs.points.trim().split(/\s+/).length;
}

const legacy = simulated("legacy", 40);
const bounded = simulated("bounded", 40);
const checkpointCount = bounded.calls.filter((c) => c.checkpoint).length;

test("the fixture exercises checkpoints (otherwise the marker checks below prove nothing)", () => {
  assert.ok(checkpointCount >= 3, `bounded fixture has ${checkpointCount} checkpoints`);
  assert.equal(legacy.calls.length, 80);
});

test("the page is self-contained: no script, no external resource, a CSP that forbids loading anything", () => {
  const html = renderReportHtml([named("legacy.json", legacy), named("bounded.json", bounded)]);
  assert.match(html, /^<!doctype html>/);
  for (const forbidden of [/<script/i, /https?:/i, /\s(src|href)=/i, /@import|url\(/i]) {
    assert.ok(!forbidden.test(html), `the page contains ${forbidden}`);
  }
  assert.ok(
    html.includes(
      `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`,
    ),
  );
});

test("the per-call chart has one polyline per report with one point per call, and one marker per checkpoint", () => {
  const html = renderReportHtml([named("legacy.json", legacy), named("bounded.json", bounded)]);
  const lines = chartPolylines(html, "chart-per-call");
  assert.deepEqual(lines.map((l) => l.attrs["data-series"]), ["0", "1"]);
  for (const line of lines) {
    assert.equal(line.attrs["data-points"], "80");
    assert.equal(pointCount(line), 80);
  }
  const groups = tags(html, "g").filter((t) => t.attrs.class === "checkpoints");
  assert.deepEqual(groups.map((g) => [g.attrs["data-series"], g.attrs["data-count"]]), [["0", "0"], [
    "1",
    String(checkpointCount),
  ]]);
  const markers = tags(html, "polygon").filter((t) => t.attrs.class === "checkpoint");
  assert.deepEqual(
    markers.map((m) => Number(m.attrs["data-call"])),
    bounded.calls.flatMap((c, i) => (c.checkpoint ? [i + 1] : [])),
  );
});

test("the per-call chart draws the 32, 48 and 64 KiB lines with labels; the cumulative chart does not", () => {
  const html = renderReportHtml([named("legacy.json", legacy), named("bounded.json", bounded)]);
  const perCall = html.slice(html.indexOf('id="chart-per-call"'), html.indexOf('id="chart-cumulative"'));
  const thresholds = tags(perCall, "g").filter((t) => t.attrs.class === "threshold").map((t) => t.attrs["data-bytes"]);
  assert.deepEqual(thresholds, ["32768", "49152", "65536"]);
  for (const label of ["32 KiB retirement target", "48 KiB retirement trigger", "64 KiB hard ceiling"]) {
    assert.ok(perCall.includes(`>${label}</text>`), label);
  }
  const cumulative = html.slice(html.indexOf('id="chart-cumulative"'));
  assert.ok(!cumulative.includes('class="threshold"'));
  const yLabels = [...perCall.matchAll(/<text class="tick" x="\d+" [^>]*text-anchor="end">([^<]+)<\/text>/g)].map((m) =>
    m[1]
  );
  assert.deepEqual(
    yLabels,
    ["0 B", "32 KiB", "64 KiB", "96 KiB", "128 KiB", "160 KiB"],
    "the y axis is labelled in KiB",
  );
});

test("the cumulative chart's last point of each series sits at the report's total request bytes", () => {
  const html = renderReportHtml([named("legacy.json", legacy), named("bounded.json", bounded)]);
  const cumulative = html.slice(html.indexOf('id="chart-cumulative"'));
  const svg = tags(html, "svg").find((t) => t.attrs.id === "chart-cumulative")!;
  const plot = tags(cumulative, "rect").find((t) => t.attrs.class === "plot")!;
  const [yMax, top, height] = [svg.attrs["data-y-max"], plot.attrs.y, plot.attrs.height].map(Number);
  assert.equal(svg.attrs["data-scale"], "linear");
  const lines = chartPolylines(html, "chart-cumulative");
  assert.equal(lines.length, 2);
  [legacy, bounded].forEach((report, i) => {
    const total = report.calls.reduce((a, c) => a + c.request_bytes, 0);
    const lastY = Number(lines[i].attrs.points.trim().split(/\s+/).at(-1)!.split(",")[1]);
    assert.ok(Math.abs(lastY - (top + height - (total / yMax) * height)) <= 0.1, `series ${i} ends at ${total} bytes`);
  });
});

test("when legacy dwarfs the ceiling, the per-call chart switches to a log scale so the 32/48/64 KiB lines stay apart", () => {
  const html = renderReportHtml([
    named("big.json", simulated("legacy", 200, { growth: 9000 })),
    named("b.json", bounded),
  ]);
  const svg = tags(html, "svg").find((t) => t.attrs.id === "chart-per-call")!;
  assert.equal(svg.attrs["data-scale"], "log");
  assert.match(html, /request bytes \(log scale\)/);
  const ys = tags(html, "line").filter((l) => l.attrs["stroke-dasharray"]).map((l) => Number(l.attrs.y1));
  assert.equal(ys.length, 3);
  assert.ok(ys[0] - ys[1] > 10 && ys[1] - ys[2] > 10, `threshold lines ${ys.join(", ")} are more than 10 px apart`);
});

test("file names are escaped, and an aggregate report is in the table but has no series", () => {
  const aggregate = aggregateReports([{ name: "a", path: null, report: bounded }], {
    version: "0.4.0",
    policy: "bounded",
  });
  const html = renderReportHtml([
    named("<b>&x.json", legacy),
    { file: "batch.json", kind: "aggregate", report: aggregate },
  ]);
  assert.ok(html.includes("&#60;b&#62;&#38;x.json"));
  assert.ok(!html.includes("<b>&x.json"));
  assert.equal(chartPolylines(html, "chart-per-call").length, 1);
  assert.match(html, /No per-call series in \[2\] batch\.json/);
  assert.match(html, /aggregate of 1/);
});

test("--html writes the page atomically (no temp file left), prints its path and nothing else", async () => {
  const dir = await mkdtemp(join(tmpdir(), "loom-report-html-"));
  try {
    await writeFile(join(dir, "legacy.json"), JSON.stringify(legacy));
    await writeFile(join(dir, "bounded.json"), JSON.stringify(bounded));
    const out = { stdout: "", stderr: "" };
    const io: Io = {
      stdout: (t) => void (out.stdout += t),
      stderr: (t) => void (out.stderr += t),
      readStdin: () => Promise.resolve(""),
      env: {},
      cwd: dir,
      isTTY: false,
      signal: new AbortController().signal,
    };
    assert.equal(await main(["report", "legacy.json", "bounded.json", "--html", "page.html"], io), 0);
    assert.equal(out.stdout, "page.html\n");
    assert.equal(out.stderr, "");
    assert.deepEqual((await readdir(dir)).sort(), ["bounded.json", "legacy.json", "page.html"]);
    const html = await readFile(join(dir, "page.html"), "utf8");
    assert.equal(chartPolylines(html, "chart-per-call").length, 2);

    assert.equal(await main(["report", "legacy.json", "--html", "missing-dir/page.html"], io), 2);
    assert.match(out.stderr, /^loom report: Cannot write "missing-dir\/page\.html": no such directory\n$/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

const chromium = findChromium();
const NO_CHROMIUM =
  "Chromium is not installed (Debian: apt-get install -y chromium), so the page was not opened in a browser";

if (chromium === null && !process.env.CI) {
  console.log(`report-html.test.ts: skipping the browser test: ${NO_CHROMIUM}`);
  test.skip(`the HTML page renders its charts in headless Chromium (skipped: ${NO_CHROMIUM})`, () => {});
} else {
  test("the HTML page renders its charts in headless Chromium; a screenshot is saved to tests/artifacts/report.png", async () => {
    if (chromium === null) assert.fail(`${NO_CHROMIUM}; CI is set, so this test must run`);
    const dir = await mkdtemp(join(tmpdir(), "loom-report-browser-"));
    try {
      const page = join(dir, "report.html");
      await writeFile(page, renderReportHtml([named("legacy.json", legacy), named("bounded.json", bounded)]));
      const url = pathToFileURL(page).href;

      const dom = await dumpDom(chromium, url);
      const lines = chartPolylines(dom, "chart-per-call");
      assert.equal(lines.length, 2, "two per-call polylines in the browser's DOM");
      for (const line of lines) assert.equal(pointCount(line), 80);
      assert.equal(chartPolylines(dom, "chart-cumulative").length, 2);
      assert.equal(tags(dom, "polygon").filter((t) => t.attrs.class === "checkpoint").length, checkpointCount);

      await mkdir(ARTIFACTS, { recursive: true });
      const png = join(ARTIFACTS, "report.png");
      await rm(png, { force: true });
      await screenshot(chromium, { url, path: png, width: 1200, height: 1600 });
      await writeFile(join(ARTIFACTS, "report.html"), await readFile(page, "utf8"));
      const image = await readPng(png);
      assert.deepEqual([image.width, image.height], [1200, 1600]);
      // The charts sit below the summary cards; the series colours must be painted there, not only in the cards.
      const charts = { ...image, height: image.height - 420, pixel: (x: number, y: number) => image.pixel(x, y + 420) };
      for (const [i, color] of SERIES_COLORS.slice(0, 2).entries()) {
        const painted = countColor(charts, color);
        console.log(`series ${i} (${color}): ${painted} pixels in the charts`);
        assert.ok(painted > 1500, `series ${i} (${color}) painted on ${painted} pixels of the charts`);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
}
