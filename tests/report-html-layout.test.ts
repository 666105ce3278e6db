// The HTML report at narrow widths, measured in headless Chromium (layout assertions, not pixels): the measurements
// table scrolls sideways and shows it, and the threshold labels are drawn above the series.
import { test } from "node:test";
import assert from "node:assert/strict";
import type { ContextPolicyName } from "../lib/policy.ts";
import { readFileSync } from "node:fs";
import { aggregateReports, type ContextReport } from "../lib/report/context-report.ts";
import { ReportBuilder } from "./helpers/report-builder.ts";
import { renderReportHtml } from "../lib/report/html.ts";
import { findChromium, measureLayout } from "./helpers/chromium.ts";

/** A run whose requests grow past 48 KiB; bounded falls back to ~31 KiB there. */
function simulated(policy: ContextPolicyName, steps: number): ContextReport {
  const b = new ReportBuilder({ policy, version: "0.5.0" });
  let bytes = 20_000;
  for (let step = 1; step <= steps; step++) {
    b.recordStep(step);
    const checkpoint = policy === "bounded" && bytes > 49_152;
    if (checkpoint) bytes = 31_000;
    const usage = { input: null, cache_read: null, cache_write: null, output: null };
    b.recordCall({ phase: "selection", step, request_bytes: bytes, elapsed_ms: 5, usage, checkpoint, lookup: false });
    bytes += 3000;
  }
  return b.finish({ outcome: "completed", totalElapsedMs: steps * 10 });
}

const page = renderReportHtml([
  { file: "a-long-report-name-legacy.json", kind: "run", report: simulated("legacy", 30) },
  { file: "a-long-report-name-bounded.json", kind: "run", report: simulated("bounded", 30) },
]);

test("in the markup, every threshold label comes after every series of its chart (SVG paints in document order)", () => {
  for (const id of ["chart-per-call", "chart-per-call-narrow"]) {
    const start = page.indexOf(`<svg id="${id}"`);
    const svg = page.slice(start, page.indexOf("</svg>", start));
    const lastSeries = Math.max(svg.lastIndexOf("<polyline"), svg.lastIndexOf('class="points"'));
    const labels = [...svg.matchAll(/class="threshold-label"/g)].map((m) => m.index!);
    assert.equal(labels.length, 3, id);
    for (const at of labels) assert.ok(at > lastSeries, `${id}: a threshold label is drawn before a series`);
  }
});

const chromium = findChromium();
if (chromium === null && !process.env.CI) {
  console.log(
    "report-html-layout.test.ts: skipping the layout test: Chromium is not installed (Debian: apt-get install -y chromium)",
  );
}

type Layout = {
  pageWidth: number;
  viewport: number;
  overflowX: string;
  scrolls: boolean;
  hint: boolean;
  sticky: string;
  lastColumnRight: number;
  wrapRight: number;
  labels: { hits: number; covered: number }[];
};

const MEASURE = `
  const wrap = document.querySelector("#summary .table-scroll");
  const hint = document.querySelector(".scroll-hint");
  const narrow = window.innerWidth <= 640;
  const svg = document.getElementById(narrow ? "chart-per-call-narrow" : "chart-per-call");
  const cells = wrap.querySelectorAll("thead th");
  const labels = [...svg.querySelectorAll(".threshold-label text")].map((text) => {
    text.scrollIntoView({ block: "center" });
    const r = text.getBoundingClientRect();
    let hits = 0, covered = 0;
    for (let i = 1; i < 10; i++) for (let j = 1; j < 4; j++) {
      const stack = document.elementsFromPoint(r.left + (r.width * i) / 10, r.top + (r.height * j) / 4);
      const at = stack.indexOf(text);
      if (at === 0) hits++;
      else if (at > 0) covered++;
    }
    return { hits, covered };
  });
  return {
    pageWidth: document.documentElement.scrollWidth,
    viewport: window.innerWidth,
    overflowX: getComputedStyle(wrap).overflowX,
    scrolls: wrap.scrollWidth > wrap.clientWidth,
    hint: hint !== null && getComputedStyle(hint).display !== "none",
    sticky: getComputedStyle(wrap.querySelector("tbody td")).position,
    lastColumnRight: cells[cells.length - 1].getBoundingClientRect().right,
    wrapRight: wrap.getBoundingClientRect().right,
    labels,
  };
`;

test(
  "at 420 px the table scrolls sideways and says so, the page itself does not; at 1200 px it fits; labels are on top",
  {
    skip: chromium === null && !process.env.CI
      ? "Chromium is not installed (Debian: apt-get install -y chromium)"
      : false,
    // A hang guard sized for a loaded 2-core machine (two browser runs), not a speed measurement.
    timeout: 600_000,
  },
  async () => {
    assert.ok(chromium, "CI is set, so Chromium must be installed");
    const phone = await measureLayout<Layout>(chromium, { html: page, width: 420, measure: MEASURE });
    assert.ok(
      phone.pageWidth <= phone.viewport,
      `the page is ${phone.pageWidth} px wide in a ${phone.viewport} px window`,
    );
    assert.equal(phone.overflowX, "auto");
    assert.ok(phone.scrolls, "the second report's column is past the edge: the table must scroll");
    assert.ok(phone.lastColumnRight > phone.wrapRight, "the last column starts beyond the visible part");
    assert.ok(phone.hint, "a hint says the table scrolls");
    assert.equal(phone.sticky, "sticky", "the row labels stay in place while the columns scroll");
    const desktop = await measureLayout<Layout>(chromium, { html: page, width: 1200, measure: MEASURE });
    assert.ok(!desktop.scrolls, "at 1200 px both reports fit");
    assert.ok(!desktop.hint, "no hint where nothing scrolls");
    for (const [name, layout] of [["420 px", phone], ["1200 px", desktop]] as const) {
      assert.equal(layout.labels.length, 3, name);
      for (const [i, label] of layout.labels.entries()) {
        assert.ok(label.hits > 0, `${name}: threshold label ${i} is hit nowhere`);
        assert.equal(label.covered, 0, `${name}: threshold label ${i} is covered at ${label.covered} points`);
      }
    }
  },
);

// ---- a run with usage, a prompt cache, steps and changed files; a batch of 40 runs (issue 36) ----

const RUN = JSON.parse(readFileSync(new URL("../testdata/reports/run-with-cache.json", import.meta.url), "utf8"));
const runPage = renderReportHtml([{ file: "report.json", kind: "run", report: RUN }]);
const batchOf = (policy: ContextPolicyName, scale: number) =>
  aggregateReports(
    Array.from({ length: 40 }, (_, i) => ({
      name: `task-${String(i).padStart(2, "0")}-a-rather-long-recording-name.jsonl`,
      path: null,
      report: {
        ...RUN,
        policy,
        calls: RUN.calls.map((c: { request_bytes: number }) => ({
          ...c,
          request_bytes: Math.round(c.request_bytes * scale * (1 + i / 10)),
        })),
      },
    })),
    { version: "0.5.0", policy },
  );
const batchPage = renderReportHtml([
  { file: "legacy-all.json", kind: "aggregate", report: batchOf("legacy", 1) },
  { file: "bounded-all.json", kind: "aggregate", report: batchOf("bounded", 0.6) },
]);

type PhoneLayout = {
  pageWidth: number;
  viewport: number;
  /** Run page: the right edge of every shown steps-table cell; batch page: of every first-report value cell. */
  cellsRight: number[];
  visibleRight: number;
  /** Text boxes in a cache chart that overlap another text box of the same chart. */
  overlaps: string[];
};

const MEASURE_PHONE = `
  const narrow = window.innerWidth <= 640;
  const shown = (el) => getComputedStyle(el).display !== "none";
  const steps = document.querySelector("table.steps");
  const summary = document.querySelector("#summary .table-scroll");
  const cells = steps
    ? [...steps.querySelectorAll("td, th")].filter(shown)
    : [...summary.querySelectorAll("tbody tr")].map((row) => row.children[1]).filter(Boolean);
  const overlaps = [];
  for (const svg of document.querySelectorAll('svg[id^="chart-cache"]')) {
    if (!shown(svg.parentElement)) continue;
    const texts = [...svg.querySelectorAll("text")].map((t) => ({ t: t.textContent, r: t.getBoundingClientRect() }));
    for (let i = 0; i < texts.length; i++) for (let j = i + 1; j < texts.length; j++) {
      const a = texts[i].r, b = texts[j].r;
      if (a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1) {
        overlaps.push(texts[i].t + " / " + texts[j].t);
      }
    }
  }
  const visible = steps ? window.innerWidth : summary.getBoundingClientRect().right;
  return {
    pageWidth: document.documentElement.scrollWidth,
    viewport: window.innerWidth,
    cellsRight: cells.map((c) => c.getBoundingClientRect().right),
    visibleRight: visible,
    overlaps,
  };
`;

test(
  "at 420 px a run's steps and a batch's first values are on screen, and no cache chart text overlaps another",
  {
    skip: chromium === null && !process.env.CI
      ? "Chromium is not installed (Debian: apt-get install -y chromium)"
      : false,
    // A hang guard sized for a loaded 2-core machine (four browser runs), not a speed measurement.
    timeout: 600_000,
  },
  async () => {
    assert.ok(chromium, "CI is set, so Chromium must be installed");
    assert.ok(runPage.includes('id="chart-cache-0"'), "the fixture has usage and a cache: the cache chart is drawn");
    for (const width of [420, 1200]) {
      for (const [name, html] of [["run page", runPage], ["batch page", batchPage]] as const) {
        const layout: PhoneLayout = await measureLayout<PhoneLayout>(chromium, { html, width, measure: MEASURE_PHONE });
        const at = `${name} at ${width} px`;
        assert.ok(layout.pageWidth <= layout.viewport, `${at}: the page is ${layout.pageWidth} px wide`);
        assert.ok(layout.cellsRight.length > 0, at);
        const off: number[] = layout.cellsRight.filter((right: number) => right > layout.visibleRight + 1);
        assert.deepEqual(off, [], `${at}: cells past the visible edge ${layout.visibleRight}`);
        assert.deepEqual(layout.overlaps, [], `${at}: cache chart texts overlap`);
      }
    }
  },
);
