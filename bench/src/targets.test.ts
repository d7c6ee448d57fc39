import { describe, expect, it } from "vitest";
import { checkTarget } from "./targets.js";

describe("checkTarget", () => {
  it("meets an at-most target at the limit and misses above it", () => {
    expect(checkTarget("s", "t", 2, "×", "at most", 2).met).toBe(true);
    expect(checkTarget("s", "t", 2.01, "×", "at most", 2).met).toBe(false);
  });

  it("meets an at-least target at the limit and reports the ratio", () => {
    const check = checkTarget("s", "t", 3000, "exec/s", "at least", 1500);
    expect(check).toMatchObject({ met: true, ratioToLimit: 2 });
    expect(checkTarget("s", "t", 1499, "exec/s", "at least", 1500).met).toBe(false);
  });

  it("never passes a missing measurement", () => {
    expect(checkTarget("s", "t", Number.NaN, "ms", "at most", 3).met).toBe(false);
  });
});
