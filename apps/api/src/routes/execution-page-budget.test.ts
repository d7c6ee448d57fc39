import type { PlaybookExecutionResult } from "@pes/contracts";
import { describe, expect, it } from "vitest";
import { renderExecutionPage } from "./execution-page.js";

const view = (result: PlaybookExecutionResult) =>
  renderExecutionPage({
    id: "exec-1",
    status: "completed",
    createdAt: new Date("2026-11-20T14:08:00Z"),
    completedAt: new Date("2026-11-20T14:08:05Z"),
    result,
    charts: new Map(),
    expiresAt: new Date("2026-11-27T14:08:00Z"),
  });

/** The budget table's rows as the page has them: each kind, whether it is the one reached, and its two cells. */
function budgetRows(html: string): Array<{ kind: string; exhausted: boolean; cells: string[] }> {
  const table = /<table id="budget">([\s\S]*?)<\/table>/.exec(html)?.[1] ?? "";
  return [...table.matchAll(/<tr( class="exhausted")? data-kind="([^"]+)">([\s\S]*?)<\/tr>/g)].map((row) => ({
    kind: row[2] ?? "",
    exhausted: row[1] !== undefined,
    cells: [...(row[3] ?? "").matchAll(/<td>([\s\S]*?)<\/td>/g)].map((cell) => (cell[1] ?? "").replace(/<[^>]+>/g, "")),
  }));
}

describe("the execution page's budget", () => {
  it("shows what was spent of each kind against its limit, and which limit stopped the investigation", () => {
    const html = view({
      highlights: "…",
      budget: {
        exhausted: "queries",
        spent: { queries: 2, bytes: 2_048, wallTimeMs: 1_500, modelTokens: 0 },
        limit: { queries: 2, wallTimeMs: 30_000 },
        refused: { metrics: 3 },
      },
    });
    expect(budgetRows(html)).toEqual([
      { kind: "queries", exhausted: true, cells: ["2 queries", "limit 2 queries · reached: the investigation stopped here"] },
      { kind: "bytes", exhausted: false, cells: ["2 KB read", "no limit"] },
      { kind: "wall-time", exhausted: false, cells: ["1.5 s of wall time", "limit 30.0 s of wall time"] },
      { kind: "model-tokens", exhausted: false, cells: ["0 model tokens", "no limit"] },
    ]);
    expect(html).toContain('id="budget-exhausted"');
    expect(/<p id="budget-refused">[^<]*metrics 3/.test(html)).toBe(true);
  });

  it("shows the spend of an investigation no limit stopped, and nothing for a result without a budget", () => {
    const html = view({ highlights: "…", budget: { spent: { queries: 4, bytes: 0, wallTimeMs: 80, modelTokens: 940 }, limit: {} } });
    expect(budgetRows(html).map(({ kind, exhausted }) => ({ kind, exhausted }))).toEqual(
      ["queries", "bytes", "wall-time", "model-tokens"].map((kind) => ({ kind, exhausted: false })),
    );
    expect(html).not.toContain('id="budget-exhausted"');
    expect(view({ highlights: "…" })).not.toContain('id="budget"');
  });
});
