import { describe, expect, it } from "vitest";
import { peakRssMB } from "./peak-rss.js";

describe("peakRssMB", () => {
  it("reads this process's high-water mark, at least its current RSS", () => {
    expect(peakRssMB(process.pid)).toBeGreaterThanOrEqual(process.memoryUsage.rss() / 1e6 - 1);
  });

  it("is NaN for a process that does not exist, never a passing 0", () => {
    expect(peakRssMB(2 ** 30)).toBeNaN();
  });
});
