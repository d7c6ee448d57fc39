import { describe, expect, it } from "vitest";
import { budgetStopReason, ExecutionBudget } from "./execution-budget.js";
import { PlaybookExecutionResult } from "./execution-result.js";
import { Verdict } from "./execution-verdict.js";
import { FailedObservation } from "./observation.js";

const budget: ExecutionBudget = {
  exhausted: "queries",
  spent: { queries: 2, bytes: 2_048, wallTimeMs: 130, modelTokens: 0 },
  limit: { queries: 2 },
  refused: { metrics: 3 },
};
const verdict: Verdict = {
  conclusion: "no-cause",
  symptoms: [],
  background: [],
  ruledOut: [],
  normal: [],
  unchecked: [
    { action: "third", reason: "failed", error: "budget exhausted: queries", budget: "queries" },
    { action: "fourth", reason: "failed", error: "data-source budget per minute reached", budget: "data-source-per-minute" },
  ],
  partial: { budgets: ["queries", "data-source-per-minute"] },
};

describe("an execution's budget in its result", () => {
  it("is optional, as every extension of the spec's result, and reads back as written", () => {
    expect(PlaybookExecutionResult.parse({ highlights: "…" })).toEqual({ highlights: "…" });
    expect(PlaybookExecutionResult.parse({ highlights: "…", budget, verdict })).toEqual({ highlights: "…", budget, verdict });
  });

  it("reads a budget kind a later version may add, as a client one version behind must", () => {
    expect(ExecutionBudget.parse({ ...budget, exhausted: "gpu-seconds" }).exhausted).toBe("gpu-seconds");
    const later = { ...verdict, unchecked: [{ action: "x", reason: "failed", error: "…", budget: "gpu-seconds" }], partial: { budgets: ["gpu-seconds"] } };
    expect(Verdict.parse(later).partial).toEqual({ budgets: ["gpu-seconds"] });
  });

  it("refuses a spend that is not a count", () => {
    const paths = (input: unknown) => ExecutionBudget.safeParse(input).error?.issues.map((issue) => issue.path.join(".")) ?? [];
    expect(paths({ ...budget, spent: { ...budget.spent, bytes: -1 } })).toEqual(["spent.bytes"]);
    expect(paths({ ...budget, spent: { queries: 1 } })).toEqual(["spent.bytes", "spent.wallTimeMs", "spent.modelTokens"]);
  });

  it("keeps the budget that stopped an action in its failed observation, and an older one without it reads alike", () => {
    expect(FailedObservation.parse({ kind: "failed", reason: budgetStopReason("bytes"), budget: "bytes" })).toEqual({
      kind: "failed",
      reason: "budget exhausted: bytes",
      budget: "bytes",
    });
    expect(FailedObservation.parse({ kind: "failed", reason: "timed out" })).toEqual({ kind: "failed", reason: "timed out" });
  });
});
