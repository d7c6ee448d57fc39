import { describe, expect, it } from "vitest";
import { medianItem, quantileOfSorted, summarizeLatencies } from "./stats.js";

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
  });
});

describe("medianItem", () => {
  it("picks the round whose ratio is the median, lower middle for an even count", () => {
    const rounds = [
      { round: 1, ratio: 0.61 },
      { round: 2, ratio: 0.42 },
      { round: 3, ratio: 0.5 },
    ];
    expect(medianItem(rounds, (item) => item.ratio).round).toBe(3);
    expect(medianItem(rounds.slice(0, 2), (item) => item.ratio).round).toBe(2);
    expect(() => medianItem([], () => 0)).toThrow(RangeError);
  });
});
