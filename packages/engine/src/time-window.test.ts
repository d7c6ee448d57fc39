import { describe, expect, it } from "vitest";
import { issueWindow, parseDuration } from "./time-window.js";

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

describe("issueWindow", () => {
  const time = new Date("2026-11-21T14:05:00Z");
  it("spans before..after around the issue time", () => {
    expect(issueWindow(time, { before: "1h", after: "15m" }, new Date("2026-11-22T00:00:00Z"))).toEqual({
      start: new Date("2026-11-21T13:05:00Z"),
      time,
      end: new Date("2026-11-21T14:20:00Z"),
    });
  });

  it("ends at now when the issue is recent", () => {
    const now = new Date("2026-11-21T14:09:30Z");
    expect(issueWindow(time, { before: "30m", after: "15m" }, now)).toEqual({ start: new Date("2026-11-21T13:35:00Z"), time, end: now });
  });

  it("never ends before an issue time that lies ahead of the clock", () => {
    const now = new Date("2026-11-21T14:04:00Z");
    expect(issueWindow(time, { before: "1h", after: "15m" }, now).end).toEqual(time);
  });
});
