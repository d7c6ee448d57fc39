import { describe, expect, it } from "vitest";
import { parseDuration } from "./playbook-duration.js";

describe("parseDuration", () => {
  it.each([
    ["90s", 90_000],
    ["15m", 900_000],
    ["1h", 3_600_000],
    ["2d", 172_800_000],
    ["500ms", 500],
  ])("%s → %d ms", (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(["", "1", "h", "1.5h", "-1h", "1w", " 1h"])("rejects %j", (text) => {
    expect(() => parseDuration(text)).toThrow("invalid duration");
  });
});
