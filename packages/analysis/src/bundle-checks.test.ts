import { EvidenceBundle } from "@pes/contracts";
import { describe, expect, it } from "vitest";
import { bundleProblems } from "./bundle-checks.js";
import { replayBundle } from "./replay.js";

const window = { start: "2026-11-20T13:08:00Z", time: "2026-11-20T14:08:00Z", end: "2026-11-20T14:23:00Z" };
const bundle = (observation: object, over: object = window) =>
  EvidenceBundle.parse({ v: 1, issue: { bookName: "checkout", time: window.time, attributes: {} }, actions: [{ title: "Logs", window: over, observation }] });

describe("bundleProblems", () => {
  it("names nothing in a bundle the analysis reads whole", () => {
    expect(bundleProblems(bundle({ kind: "logs", streams: [{ lines: [{ at: Date.parse("2026-11-20T14:00:00Z"), line: "ERROR boom" }] }] }))).toEqual([]);
  });

  it("names each field it cannot read", () => {
    expect(bundleProblems(bundle({ kind: "kubernetes-event", items: [] }))).toEqual([
      expect.stringMatching(
        /^actions\[0\]\.observation\.kind: "kubernetes-event" is not an observation kind this build reads \(prometheus, .*kubernetes-events/,
      ),
    ]);
    expect(
      bundleProblems(bundle({ kind: "logs", streams: [{ lines: [{ at: 1_795_000_000, line: "ERROR boom" }] }], counts: [{ at: 1_795_000_000, count: 1 }] })),
    ).toEqual([
      "actions[0].observation.streams[0].lines[0].at: 1795000000 looks like seconds: log times are epoch milliseconds",
      "actions[0].observation.counts[0].at: 1795000000 looks like seconds: log times are epoch milliseconds",
    ]);
    expect(bundleProblems(bundle({ kind: "text", text: "ok" }, { ...window, start: window.end }))).toEqual([
      "actions[0].window: start, time and end must be in that order",
    ]);
    expect(bundleProblems(bundle({ kind: "kubernetes-pods", items: [{ metadata: {} }] }))).toEqual([
      expect.stringMatching(/^actions\[0\]\.observation\.items\[0\]\.metadata\.name: /),
    ]);
  });

  it("leaves a replay to read a known kind that is not what its schema says as a failed action", () => {
    const replay = replayBundle(bundle({ kind: "kubernetes-pods", items: [{ metadata: {} }] }));
    expect(replay.unreadable).toEqual(["Logs"]);
    expect(replay.verdict.unchecked).toEqual([{ action: "Logs", reason: "failed", error: 'cannot read its observation of kind "kubernetes-pods"' }]);
  });
});
