import { describe, expect, it } from "vitest";
import { issueWindow } from "./time-window.js";

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
