import { describe, expect, it } from "vitest";
import type { CaseResult } from "./benchmark-run.js";
import { quantile, renderReport, reportRows } from "./report.js";

function result(category: string, a1: number, fields: Partial<CaseResult> = {}): CaseResult {
  return {
    id: `${category}/x`,
    category,
    predictions: [],
    conclusion: "cause",
    scores: { a1, a3: a1, partial_a1: a1, partial_a3: a1 },
    convertMs: 10,
    analysisMs: 2,
    notes: [],
    ...fields,
  };
}

describe("the report", () => {
  it("takes quantiles by nearest rank", () => {
    expect(quantile([5, 1, 3], 0.5)).toBe(3);
    expect(quantile([1, 2, 3, 4], 0.99)).toBe(4);
    expect(quantile([], 0.5)).toBe(0);
  });

  it("rows each category then all, with confident wrong answers and conclusions counted", () => {
    const rows = reportRows([
      result("runtime", 1, { confidence: "high" }),
      result("runtime", 0, { confidence: "high" }),
      result("startup", 0, { conclusion: "no-cause" }),
      result("startup", 0, { conclusion: "ambiguous", confidence: "low" }),
    ]);
    expect(rows.map((row) => [row.category, row.cases, row.a1, row.confidentWrong, row.noCause, row.ambiguous])).toEqual([
      ["runtime", 2, 0.5, 0.5, 0, 0],
      ["startup", 2, 0, 0, 1, 1],
      ["overall", 4, 0.25, 0.25, 1, 1],
    ]);
    expect(renderReport(rows).split("\n")).toHaveLength(5);
  });
});
