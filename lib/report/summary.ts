// Summaries and side-by-side comparisons of context reports, as data (for --json and HTML): the document `loom report`
// prints (its text: summary-text.ts).
import type { NamedReport } from "./load.ts";
import { type ReportSummary, summarizeReport } from "./report-summary.ts";
import { type Comparison, comparisonOf } from "./comparison.ts";

const SUMMARY_FORMAT = "loom-report-summary";
const SUMMARY_VERSION = 1;

export type SummaryDocument = {
  format: typeof SUMMARY_FORMAT;
  version: typeof SUMMARY_VERSION;
  reports: ReportSummary[];
  comparisons: Comparison[];
};

export function summarizeReports(reports: NamedReport[]): SummaryDocument {
  const summaries = reports.map(summarizeReport);
  const [first, ...rest] = summaries;
  const comparisons = first === undefined ? [] : rest.map((s) => comparisonOf(first, s));
  return { format: SUMMARY_FORMAT, version: SUMMARY_VERSION, reports: summaries, comparisons };
}
