import { describe, expect, it } from "vitest";
import { demoIncidentLogs } from "./demo-logs.js";

describe("the demo incident's logs", () => {
  const incidentAt = new Date("2026-11-20T14:05:00Z");
  const streams = demoIncidentLogs({ incidentAt });
  const lines = (service: string, pattern: RegExp, from: number, to: number) =>
    (streams.find((stream) => stream.labels.service === service)?.entries ?? []).filter(
      (entry) => pattern.test(entry.line) && entry.at.getTime() >= from && entry.at.getTime() < to,
    ).length;
  const hourBefore = incidentAt.getTime() - 3_600_000;
  const incident = incidentAt.getTime();

  it("logs checkout's new error from the incident on only, 15 a minute", () => {
    expect(lines("checkout", /price lookup failed/, hourBefore, incident)).toBe(0);
    expect(lines("checkout", /price lookup failed/, incident, incident + 10 * 60_000)).toBe(150);
  });

  it("logs the usual error and requests at the same rate before and after, for both services", () => {
    for (const service of ["checkout", "search"]) {
      expect(lines(service, /cache miss storm/, hourBefore, incident)).toBe(60);
      expect(lines(service, /cache miss storm/, incident, incident + 10 * 60_000)).toBe(10);
      expect(lines(service, /request handled/, incident - 10 * 60_000, incident)).toBe(60);
    }
    expect(lines("search", /price lookup failed/, incident, incident + 30 * 60_000)).toBe(0);
  });
});
