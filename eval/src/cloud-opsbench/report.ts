import { averageScores } from "./scoring.js";
import type { CaseResult } from "./benchmark-run.js";

/** One line of the report: a category's cases, or all of them. */
export interface ReportRow {
  category: string;
  cases: number;
  a1: number;
  a3: number;
  partialA1: number;
  partialA3: number;
  /** Shares of cases whose top prediction has the right taxonomy, object, root cause (each alone). */
  taxonomyAt1: number;
  objectAt1: number;
  rootCauseAt1: number;
  /** Share of cases whose top prediction is wrong while the verdict's confidence is high. */
  confidentWrong: number;
  noCause: number;
  ambiguous: number;
  analysisMedianMs: number;
  analysisP99Ms: number;
  convertMedianMs: number;
  convertP99Ms: number;
}

/** The value at that quantile, nearest rank (p99 of 21 cases is the largest). */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;
}

function share(results: readonly CaseResult[], test: (result: CaseResult) => boolean): number {
  return results.length === 0 ? 0 : results.filter(test).length / results.length;
}

function rowOf(category: string, results: readonly CaseResult[]): ReportRow {
  const scored = results.flatMap((result) => (result.scores === undefined ? [] : [result.scores]));
  const mean = averageScores(scored);
  const confidentWrong = results.filter((result) => result.confidence === "high" && result.conclusion !== "no-cause" && result.scores?.a1 === 0).length;
  return {
    category,
    cases: results.length,
    a1: mean.a1,
    a3: mean.a3,
    partialA1: mean.partial_a1,
    partialA3: mean.partial_a3,
    taxonomyAt1: share(results, (result) => result.fields?.taxonomy === true),
    objectAt1: share(results, (result) => result.fields?.object === true),
    rootCauseAt1: share(results, (result) => result.fields?.rootCause === true),
    confidentWrong: results.length === 0 ? 0 : confidentWrong / results.length,
    noCause: results.filter((result) => result.conclusion === "no-cause").length,
    ambiguous: results.filter((result) => result.conclusion === "ambiguous").length,
    analysisMedianMs: quantile(
      results.map((result) => result.analysisMs),
      0.5,
    ),
    analysisP99Ms: quantile(
      results.map((result) => result.analysisMs),
      0.99,
    ),
    convertMedianMs: quantile(
      results.map((result) => result.convertMs),
      0.5,
    ),
    convertP99Ms: quantile(
      results.map((result) => result.convertMs),
      0.99,
    ),
  };
}

/** A row per category, in order, then `overall`. */
export function reportRows(results: readonly CaseResult[]): ReportRow[] {
  const categories = [...new Set(results.map((result) => result.category))];
  return [
    ...categories.map((category) =>
      rowOf(
        category,
        results.filter((result) => result.category === category),
      ),
    ),
    rowOf("overall", results),
  ];
}

const percent = (value: number) => `${(value * 100).toFixed(1)}%`;
const ms = (value: number) => (value < 10 ? value.toFixed(2) : value.toFixed(0));

/** The rows as a Markdown table. */
export function renderReport(rows: readonly ReportRow[]): string {
  const header = [
    "category",
    "cases",
    "A@1",
    "A@3",
    "partial A@1",
    "partial A@3",
    "taxonomy@1",
    "object@1",
    "root cause@1",
    "confident wrong",
    "no-cause",
    "ambiguous",
    "analysis ms p50",
    "p99",
    "convert ms p50",
    "p99",
  ];
  const lines = [`| ${header.join(" | ")} |`, `|${header.map((_, index) => (index < 1 ? "---" : "---:")).join("|")}|`];
  for (const row of rows) {
    lines.push(
      `| ${[
        row.category,
        String(row.cases),
        percent(row.a1),
        percent(row.a3),
        percent(row.partialA1),
        percent(row.partialA3),
        percent(row.taxonomyAt1),
        percent(row.objectAt1),
        percent(row.rootCauseAt1),
        percent(row.confidentWrong),
        String(row.noCause),
        String(row.ambiguous),
        ms(row.analysisMedianMs),
        ms(row.analysisP99Ms),
        ms(row.convertMedianMs),
        ms(row.convertP99Ms),
      ].join(" | ")} |`,
    );
  }
  return lines.join("\n");
}
