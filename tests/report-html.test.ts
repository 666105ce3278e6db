// `loom report --html`: one self-contained page with the charts, checked as markup and as rendered by headless Chromium.
import type { ContextPolicyName } from "../lib/policy.ts";
import { test } from "node:test";
import assert from "node:assert/strict";
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { main } from "../main.ts";
import type { Io } from "../commands/io.ts";
import { aggregateReports, type ContextReport } from "../lib/report/context-report.ts";
import { ReportBuilder } from "./helpers/report-builder.ts";
import { renderReportHtml, SERIES_COLORS } from "../lib/report/html.ts";
import { spreadLabels } from "../lib/report/chart.ts";
import fc from "fast-check";
import { runLoom } from "./helpers/binary.ts";
import type { NamedReport } from "../lib/report/load.ts";
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

/** The markup of one chart (the page draws each twice: `ID` wide, `ID-narrow` for phones). */
function chart(html: string, id: string): string {
  const start = html.indexOf(`<svg id="${id}"`);
  assert.ok(start >= 0, `no chart ${id}`);
  return html.slice(start, html.indexOf("</svg>", start) + 6);
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
  const perCall = chart(html, "chart-per-call");
  const groups = tags(perCall, "g").filter((t) => t.attrs.class === "checkpoints");
  assert.deepEqual(groups.map((g) => [g.attrs["data-series"], g.attrs["data-count"]]), [["0", "0"], [
    "1",
    String(checkpointCount),
  ]]);
  const markers = tags(perCall, "polygon").filter((t) => t.attrs.class === "checkpoint");
  assert.deepEqual(
    markers.map((m) => Number(m.attrs["data-call"])),
    bounded.calls.flatMap((c, i) => (c.checkpoint ? [i + 1] : [])),
  );
});

test("the per-call chart draws the 32, 48 and 64 KiB lines with labels; the cumulative chart does not", () => {
  const html = renderReportHtml([named("legacy.json", legacy), named("bounded.json", bounded)]);
  const perCall = chart(html, "chart-per-call");
  const thresholds = tags(perCall, "g").filter((t) => t.attrs.class === "threshold").map((t) => t.attrs["data-bytes"]);
  assert.deepEqual(thresholds, ["32768", "49152", "65536"]);
  for (const label of ["32 KiB retirement target", "48 KiB retirement trigger", "64 KiB hard ceiling"]) {
    assert.ok(perCall.includes(`>${label}</text>`), label);
  }
  assert.ok(!chart(html, "chart-cumulative").includes('class="threshold"'));
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
  const cumulative = chart(html, "chart-cumulative");
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
  const ys = tags(chart(html, "chart-per-call"), "line").filter((l) => l.attrs["stroke-dasharray"]).map((l) =>
    Number(l.attrs.y1)
  );
  assert.equal(ys.length, 3);
  assert.ok(ys[0] - ys[1] > 10 && ys[1] - ys[2] > 10, `threshold lines ${ys.join(", ")} are more than 10 px apart`);
});

test("a legacy run at 300 KiB beside a bounded one gets a log axis: the bounded series spans more than a sixth", () => {
  const big = simulated("legacy", 60, { growth: 4500 });
  assert.ok(Math.max(...big.calls.map((c) => c.request_bytes)) > 300 * 1024);
  assert.ok(Math.max(...big.calls.map((c) => c.request_bytes)) < 8 * 65_536, "below the old log switch");
  const html = renderReportHtml([
    named("legacy.json", big),
    named("bounded.json", simulated("bounded", 60, { growth: 4500 })),
  ]);
  const perCall = chart(html, "chart-per-call");
  assert.match(perCall, /data-scale="log"/);
  const plot = tags(perCall, "rect").find((t) => t.attrs.class === "plot")!;
  const ys = chartPolylines(html, "chart-per-call")[1].attrs.points.trim().split(/\s+/).map((p) =>
    Number(p.split(",")[1])
  );
  const spread = (Math.max(...ys) - Math.min(...ys)) / Number(plot.attrs.height);
  assert.ok(spread > 0.4, `the bounded series spans ${(spread * 100).toFixed(0)}% of the plot's height`);
  // The cumulative chart stays linear: totals are compared by their height.
  assert.match(chart(html, "chart-cumulative"), /data-scale="linear"/);
});

test("threshold labels never overprint: at least a line of text apart at every scale, inside the plot", () => {
  fc.assert(
    fc.property(fc.array(fc.double({ min: 0, max: 400, noNaN: true }), { minLength: 1, maxLength: 6 }), (ys) => {
      const placed = spreadLabels(ys, { gap: 15, top: 20, bottom: 400 });
      const sorted = [...placed].sort((a, b) => a - b);
      for (let i = 1; i < sorted.length; i++) assert.ok(sorted[i] - sorted[i - 1] >= 15 - 1e-9);
      for (const y of placed) assert.ok(y >= 20);
    }),
  );
  // A linear axis up to 1 MiB puts the three lines 3 px apart; the labels still are not.
  const html = renderReportHtml([named("b.json", simulated("bounded", 60, { growth: 20_000 }))]);
  const labels = [
    ...chart(html, "chart-per-call").matchAll(/<g class="threshold-label"[^>]*><text x="[\d.]+" y="([\d.]+)"/g),
  ]
    .map((m) => Number(m[1]));
  assert.equal(labels.length, 3);
  const sorted = [...labels].sort((a, b) => a - b);
  assert.ok(sorted[1] - sorted[0] >= 14 && sorted[2] - sorted[1] >= 14, `labels at ${labels.join(", ")}`);
});

test("threshold lines only where a bounded run is drawn: a legacy-only report has none", () => {
  const html = renderReportHtml([named("legacy.json", legacy)]);
  assert.ok(!html.includes('class="threshold"'));
  assert.ok(!html.includes("retirement"));
  assert.ok(renderReportHtml([named("legacy.json", legacy), named("b.json", bounded)]).includes('class="threshold"'));
});

test("the headline ratios come first, large: request bytes and largest request of each report against [1]", () => {
  const html = renderReportHtml([named("legacy.json", legacy), named("bounded.json", bounded)]);
  const headline = html.slice(html.indexOf('<div class="headline">'), html.indexOf('<div class="cards">'));
  assert.ok(html.indexOf('<div class="headline">') < html.indexOf("<section"), "before every section");
  const total = bounded.phases.selection.request_bytes.total + bounded.phases.arguments.request_bytes.total;
  const base = legacy.phases.selection.request_bytes.total + legacy.phases.arguments.request_bytes.total;
  assert.ok(headline.includes(`<span class="big">${(total / base).toFixed(2)}×</span>`), headline);
  assert.match(headline, /request bytes, \[2\] bounded\.json vs \[1\] legacy\.json/);
  assert.match(html, /\.headline \.big \{ font-size: 44px/);
});

test("file names are escaped, and an aggregate report draws per-run bars and distributions, not empty cards", () => {
  const runs = [legacy, bounded, simulated("legacy", 12)].map((report, i) => ({
    name: `r${i}.json`,
    path: null,
    report,
  }));
  const aggregate = aggregateReports(runs, { version: "0.4.0", policy: "legacy" });
  const html = renderReportHtml([
    named("<b>&x.json", legacy),
    { file: "batch.json", kind: "aggregate", report: aggregate },
  ]);
  assert.ok(html.includes("&#60;b&#62;&#38;x.json"));
  assert.ok(!html.includes("<b>&x.json"));
  assert.equal(chartPolylines(html, "chart-per-call").length, 1);
  const bars = tags(chart(html, "chart-per-run"), "g").filter((t) => t.attrs.class === "bars");
  assert.deepEqual(bars.map((b) => [b.attrs["data-series"], b.attrs["data-bars"]]), [["1", "3"]]);
  const boxes = tags(chart(html, "chart-distribution-total"), "g").filter((t) => t.attrs.class === "box");
  assert.equal(boxes.length, 1);
  const totals = aggregate.runs.map((r) => r.request_bytes).sort((a, b) => a - b);
  assert.equal(Number(boxes[0].attrs["data-median"]), totals[1]);
  assert.match(html, /aggregate of 3/);
  const only = renderReportHtml([{ file: "batch.json", kind: "aggregate", report: aggregate }]);
  assert.ok(!only.includes('id="per-call"'), "no per-call section for an aggregate alone");
  assert.ok(only.includes('id="per-run"'));
});

test("loom report labels each report by --label, else by its file name, never by its path", async () => {
  const dir = await mkdtemp(join(tmpdir(), "loom-report-label-"));
  try {
    await mkdir(join(dir, "deep", "folder"), { recursive: true });
    const a = join(dir, "deep", "folder", "legacy.json"), b = join(dir, "deep", "folder", "bounded.json");
    await writeFile(a, JSON.stringify(legacy));
    await writeFile(b, JSON.stringify(bounded));
    const page = join(dir, "page.html");
    const plain = await runLoom(["report", a, b, "--html", page], { cwd: dir });
    assert.equal(plain.code, 0, plain.stderr);
    let html = await readFile(page, "utf8");
    assert.ok(html.includes("[1] legacy.json (legacy)") && !html.includes(join("deep", "folder")));
    const labelled = await runLoom(["report", a, b, "--label", "before", "--label", "after", "--html", page], {
      cwd: dir,
    });
    assert.equal(labelled.code, 0, labelled.stderr);
    html = await readFile(page, "utf8");
    assert.ok(html.includes("[1] before (legacy)") && html.includes("[2] after (bounded)"));
    const text = await runLoom(["report", a, b, "--label", "before"], { cwd: dir });
    assert.match(text.stdout, /\[1\] before +\[2\] bounded\.json/);
    const tooMany = await runLoom(["report", a, "--label", "x", "--label", "y"], { cwd: dir });
    assert.equal(tooMany.code, 2);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
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

    // One rule for output folders across commands (as --context-report and eval reports): a missing one is created
    // and said in one line.
    assert.equal(await main(["report", "legacy.json", "--html", "missing-dir/page.html"], io), 0);
    assert.match(out.stderr, /^loom report: --html: creating the folder ".*missing-dir"\n$/);
    assert.ok((await readdir(join(dir, "missing-dir"))).includes("page.html"));
    // What cannot be a folder is refused before anything is read.
    out.stderr = "";
    assert.equal(await main(["report", "legacy.json", "--html", "legacy.json/page.html"], io), 2);
    assert.match(out.stderr, /^loom report: --html "legacy\.json\/page\.html": /);
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
  // A hang guard sized for a loaded 2-core machine (six browser runs), not a speed measurement. Screenshots are taken
  // in the test's own folder and only copied to tests/artifacts/ for people: no test ever reads them from there.
  test(
    "the HTML page renders its charts in headless Chromium at desktop and phone widths; screenshots in tests/artifacts/",
    {
      timeout: 600_000,
    },
    async () => {
      if (chromium === null) assert.fail(`${NO_CHROMIUM}; CI is set, so this test must run`);
      const dir = await mkdtemp(join(tmpdir(), "loom-report-browser-"));
      try {
        const page = join(dir, "report.html");
        await writeFile(page, renderReportHtml([named("legacy.json", legacy), named("bounded.json", bounded)]));
        // (the markup checks below use the wide chart; the narrow one carries the same series)
        const url = pathToFileURL(page).href;

        const dom = await dumpDom(chromium, url);
        const lines = chartPolylines(dom, "chart-per-call");
        assert.equal(lines.length, 2, "two per-call polylines in the browser's DOM");
        for (const line of lines) assert.equal(pointCount(line), 80);
        assert.equal(chartPolylines(dom, "chart-cumulative").length, 2);
        const markers = (id: string) => tags(chart(dom, id), "polygon").filter((t) => t.attrs.class === "checkpoint");
        assert.equal(markers("chart-per-call").length, checkpointCount);
        assert.equal(markers("chart-per-call-narrow").length, checkpointCount);

        const shown: string[] = [];
        // Desktop and phone widths: at 420 px the narrow charts show (their own layout, text at full size).
        for (const [name, width] of [["report.png", 1200], ["report-phone.png", 420]] as const) {
          const png = join(dir, name);
          shown.push(png);
          await screenshot(chromium, { url, path: png, width, height: 2400 });
          const image = await readPng(png);
          assert.deepEqual([image.width, image.height], [width, 2400]);
          // The charts sit below the headline and the cards; the series colours must be painted there too.
          const skip = width === 1200 ? 520 : 1000;
          const charts = {
            ...image,
            height: image.height - skip,
            pixel: (x: number, y: number) => image.pixel(x, y + skip),
          };
          for (const [i, color] of SERIES_COLORS.slice(0, 2).entries()) {
            const painted = countColor(charts, color);
            console.log(`${name}: series ${i} (${color}): ${painted} pixels in the charts`);
            assert.ok(painted > (width === 1200 ? 1500 : 400), `series ${i} (${color}) painted on ${painted} pixels`);
          }
        }
        // A batch comparison: per-run bars and distributions, at both widths.
        const runs = (policy: "legacy" | "bounded") =>
          Array.from(
            { length: 12 },
            (_, i) => ({ name: `t${i}.json`, path: null, report: simulated(policy, 8 + i * 3) }),
          );
        const batches = join(dir, "batches.html");
        await writeFile(
          batches,
          renderReportHtml([
            {
              file: "legacy-all.json",
              kind: "aggregate",
              report: aggregateReports(runs("legacy"), { version: "0.4.0", policy: "legacy" }),
            },
            {
              file: "bounded-all.json",
              kind: "aggregate",
              report: aggregateReports(runs("bounded"), { version: "0.4.0", policy: "bounded" }),
            },
          ]),
        );
        for (const [name, width] of [["aggregates.png", 1200], ["aggregates-phone.png", 420]] as const) {
          const png = join(dir, name);
          shown.push(png);
          await screenshot(chromium, { url: pathToFileURL(batches).href, path: png, width, height: 2400 });
          const image = await readPng(png);
          for (const color of SERIES_COLORS.slice(0, 2)) {
            assert.ok(countColor(image, color) > 2000, `${name}: ${color} bars painted`);
          }
        }
        await mkdir(ARTIFACTS, { recursive: true });
        for (const file of [page, ...shown]) await copyFile(file, join(ARTIFACTS, basename(file)));
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  );
}
