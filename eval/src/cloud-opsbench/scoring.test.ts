import { describe, expect, it } from "vitest";
import { averageScores, comparePrediction, normalizeText, scorePredictions, topFieldMatches } from "./scoring.js";

// Expectations computed by hand from cloudops_agent/evaluation.py's compare_prediction and score_predictions.
const truth = { fault_taxonomy: "Scheduling_Fault", fault_object: "app/cart", root_cause: "taint_toleration_mismatch" };
const right = { ...truth };
const wrongTaxonomy = { ...truth, fault_taxonomy: "Startup_Fault" };
const wrongObject = { ...truth, fault_object: "app/checkout" };

describe("evaluation.py's scores", () => {
  it("normalises as str(value).strip().lower(), None as empty", () => {
    expect(normalizeText("  App/Cart ")).toBe("app/cart");
    expect(normalizeText(undefined)).toBe("");
    expect(normalizeText(null)).toBe("");
    expect(normalizeText(3)).toBe("3");
    expect(comparePrediction({ fault_taxonomy: " scheduling_fault", fault_object: "APP/cart", root_cause: "Taint_Toleration_Mismatch " }, truth)).toEqual([
      true,
      true,
    ]);
  });

  it("counts a wrong taxonomy as a partial match, a wrong object as none", () => {
    expect(comparePrediction(wrongTaxonomy, truth)).toEqual([false, true]);
    expect(comparePrediction(wrongObject, truth)).toEqual([false, false]);
    expect(comparePrediction(null, truth)).toEqual([false, false]);
  });

  it("scores A@1 on the first prediction, A@3 on the first three only", () => {
    expect(scorePredictions([right], truth)).toEqual({ a1: 1, a3: 1, partial_a1: 1, partial_a3: 1 });
    expect(scorePredictions([wrongTaxonomy, right], truth)).toEqual({ a1: 0, a3: 1, partial_a1: 1, partial_a3: 1 });
    expect(scorePredictions([wrongObject, null, right], truth)).toEqual({ a1: 0, a3: 1, partial_a1: 0, partial_a3: 1 });
    expect(scorePredictions([wrongObject, wrongObject, wrongObject, right], truth)).toEqual({ a1: 0, a3: 0, partial_a1: 0, partial_a3: 0 });
    expect(scorePredictions([], truth)).toEqual({ a1: 0, a3: 0, partial_a1: 0, partial_a3: 0 });
  });

  it("averages over every case, rounded to four decimals", () => {
    const one = { a1: 1, a3: 1, partial_a1: 1, partial_a3: 1 };
    const none = { a1: 0, a3: 0, partial_a1: 0, partial_a3: 0 };
    expect(averageScores([one, none, none])).toEqual({ a1: 0.3333, a3: 0.3333, partial_a1: 0.3333, partial_a3: 0.3333 });
    expect(averageScores([])).toEqual(none);
  });
});

describe("per-field matches of the top prediction", () => {
  it("tells which fields are right", () => {
    expect(topFieldMatches([wrongObject, right], truth)).toEqual({ taxonomy: true, object: false, rootCause: true });
    expect(topFieldMatches([], truth)).toEqual({ taxonomy: false, object: false, rootCause: false });
  });
});
