import { describe, expect, it } from "vitest";
import { toOpenMetrics } from "@pes/local-services";
import { SCENARIOS } from "./data/index.js";

// The data sets themselves: deterministic, and noisy in every source, so that an investigation that calls
// anything non-empty abnormal fails the scenarios.
const issueAt = new Date("2026-11-24T15:00:00Z");

describe.each(SCENARIOS)("the $name data set", ({ build }) => {
  const scenario = build(issueAt);

  it("is the same for the same issue time", () => {
    expect(JSON.stringify(build(issueAt).data)).toBe(JSON.stringify(scenario.data));
  });

  it("renders as OpenMetrics that promtool can read (names, labels, one family per name)", () => {
    const text = toOpenMetrics(scenario.data.series);
    expect(text.endsWith("# EOF\n")).toBe(true);
    expect(scenario.data.series.every((series) => series.samples.every(([, value]) => Number.isFinite(value)))).toBe(true);
  });

  it("has noise in every source: other services' series, logs, documents, alerts, rollouts and warnings", () => {
    const { series, logStreams, documents, alerts, kubernetes } = scenario.data;
    expect(new Set(series.map((item) => item.labels?.service).filter(Boolean)).size).toBeGreaterThanOrEqual(5);
    expect(new Set(series.map((item) => item.labels?.node).filter(Boolean)).size).toBe(3);
    expect(
      logStreams
        .filter((stream) => stream.labels.app === "search")
        .flatMap((stream) => stream.entries)
        .some((line) => /level=error/.test(line.line)),
    ).toBe(true);
    expect(documents.some((document) => document.source.response_flags === "UF")).toBe(true);
    expect(alerts.map((alert) => alert.labels.alertname)).toEqual(expect.arrayContaining(["Watchdog", "DiskSpaceLow", "KubePodCrashLooping"]));
    expect(
      kubernetes.replicaSets.some(
        (rs) => rs.metadata.name.startsWith("cart-") && Date.parse(String(rs.metadata.creationTimestamp)) > issueAt.getTime() - 3_600_000,
      ),
    ).toBe(true);
    expect(kubernetes.events.some((event) => event.type === "Warning" && event.reason === "BackOff")).toBe(true);
  });

  it("keeps every sample, line and document within the data's range, which ends 15 minutes after the issue", () => {
    const end = issueAt.getTime() + 15 * 60_000;
    expect(scenario.data.series.every((item) => item.samples.every(([at]) => at * 1000 <= end))).toBe(true);
    expect(scenario.data.logStreams.every((stream) => stream.entries.every((line) => line.at.getTime() <= end))).toBe(true);
    expect(scenario.data.documents.every((document) => Date.parse(String(document.source["@timestamp"])) <= end)).toBe(true);
  });
});
