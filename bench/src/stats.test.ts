import { describe, expect, it } from "vitest";
import { median, quantileOfSorted, summarizeLatencies } from "./stats.js";

describe("quantileOfSorted", () => {
  it("returns a measured value by nearest rank", () => {
    const sorted = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
    expect(quantileOfSorted(sorted, 0.5)).toBe(5);
    expect(quantileOfSorted(sorted, 0.99)).toBe(10);
    expect(quantileOfSorted(sorted, 0)).toBe(1);
  });

  it("is NaN without samples", () => {
    expect(quantileOfSorted([], 0.5)).toBeNaN();
  });
});

describe("summarizeLatencies", () => {
  it("sorts before ranking", () => {
    const summary = summarizeLatencies([9, 1, 5, 3, 7]);
    expect(summary).toMatchObject({ count: 5, p50: 5, p99: 9, max: 9, mean: 5 });
    expect(median([3, 1, 2])).toBe(2);
  });
});
