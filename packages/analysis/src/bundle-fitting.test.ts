import { EVIDENCE_BUNDLE_VERSION, EvidenceBundle, PrometheusObservation, type BundleAction } from "@pes/contracts";
import { describe, expect, it } from "vitest";
import { bytesOf, fitBundle } from "./bundle-fitting.js";
import { replayBundle } from "./replay.js";

const window = { start: "2026-11-20T13:08:00.000Z", time: "2026-11-20T14:08:00.000Z", end: "2026-11-20T14:23:00.000Z" };
const JUMP = Date.parse("2026-11-20T14:05:00Z") / 1000;

/** `count` pods' latency every 15 s over the window: steady, but pod 7's jumps 4× at 14:05. */
function latencyOfPods(count: number): BundleAction {
  const result = Array.from({ length: count }, (_, pod) => {
    const values: Array<[number, string]> = [];
    for (let at = Date.parse(window.start) / 1000; at <= Date.parse(window.end) / 1000; at += 15) {
      const usual = 0.4 + 0.02 * ((at / 15 + pod) % 3);
      values.push([at, String(pod === 7 && at >= JUMP ? usual * 4 : usual)]);
    }
    return { metric: { pod: `checkout-${pod}`, service: "checkout" }, values };
  });
  return {
    gadget: "Latency of checkout",
    title: "p99 latency of checkout",
    connector: "prometheus",
    query: { query: "p99", range: true },
    window,
    observation: { kind: "prometheus", data: { resultType: "matrix", result }, unit: "s" },
  };
}

/** Error logs: a new exception from 14:05, each line carrying a long stack trace. */
function errorLogs(): BundleAction {
  const lines = [];
  for (let at = Date.parse("2026-11-20T13:10:00Z"); at <= Date.parse("2026-11-20T14:20:00Z"); at += 20_000) {
    const failing = at >= JUMP * 1000;
    const line = failing
      ? `level=error msg="payment capture failed" err="java.lang.NullPointerException" stack="${"at com.shop.Checkout.capture(Checkout.java:42) ".repeat(60)}"`
      : `level=error msg="inventory reservation retried" attempt=2`;
    lines.push({ at, line });
  }
  const counts = [];
  for (let at = Date.parse(window.start); at < Date.parse(window.end); at += 60_000) {
    counts.push({ at, count: lines.filter((line) => line.at >= at && line.at < at + 60_000).length });
  }
  return {
    gadget: "Logs of checkout",
    title: "Error logs of checkout",
    connector: "loki",
    window,
    observation: { kind: "logs", streams: [{ labels: { app: "checkout" }, lines }], counts },
  };
}

function bundleOf(actions: BundleAction[]): EvidenceBundle {
  const bundle: EvidenceBundle = {
    v: EVIDENCE_BUNDLE_VERSION,
    executionId: "0b6f2c7e-1c1a-4f2e-9a63-2f0d8f1e9a01",
    recordedAt: "2026-11-20T14:09:00.000Z",
    issue: { bookName: "Checkout latency", time: window.time, attributes: { service: "checkout" } },
    actions: [
      ...actions,
      {
        gadget: "Changes",
        title: "Last deploy of checkout",
        connector: "http",
        window,
        observation: {
          kind: "json",
          answer: { version: "v1.42", at: "2026-11-20T14:01:00Z" },
          answerField: "version",
          change: { kind: "deploy", timeField: "at", subject: "checkout" },
        },
      },
    ],
    mitigations: [
      { mitigation: { toolName: "kubectl", customName: "Roll back checkout" }, when: { likelyCause: "deploy" }, offered: true },
      { mitigation: { toolName: "kubectl", customName: "Scale out checkout" }, when: { abnormal: false }, offered: false },
    ],
  };
  return { ...bundle, verdict: replayBundle(bundle).verdict };
}

describe("fitBundle", () => {
  it("cuts an oversized bundle under its cap, keeping the verdict and mitigations it replays to, and says what it cut", () => {
    const whole = bundleOf([latencyOfPods(120), errorLogs()]);
    const maxBytes = 128 * 1024;
    expect(bytesOf(whole)).toBeGreaterThan(8 * maxBytes);

    // As stored and read back: JSON, parsed by the contract.
    const fitted = EvidenceBundle.parse(JSON.parse(JSON.stringify(fitBundle(whole, maxBytes))));
    expect(Buffer.byteLength(JSON.stringify(fitted))).toBeLessThanOrEqual(maxBytes);
    expect(fitted.truncated).toEqual({ maxBytes, bytes: bytesOf(whole) });

    const replay = replayBundle(fitted);
    expect(replay.verdict).toEqual(whole.verdict);
    expect(replay.verdict.cause).toMatchObject({ kind: "deploy", action: "Last deploy of checkout" });
    expect(replay.verdict.symptoms.map(({ action }) => action)).toEqual(expect.arrayContaining(["p99 latency of checkout", "Error logs of checkout"]));
    expect(replay.actionableMitigations).toEqual([{ toolName: "kubectl", customName: "Roll back checkout" }]);
    expect(replay.truncated).toEqual(["p99 latency of checkout", "Error logs of checkout"]);

    const [latency, logs, deploy] = fitted.actions;
    // The other pods' series go first; the one the evidence names stays, whole.
    expect(latency?.truncated).toEqual([{ cut: "thinned", path: "data.result", every: 120, kept: 2, of: 120 }]);
    const { data } = PrometheusObservation.parse(latency?.observation);
    const kept = data.resultType === "matrix" ? [...data.result] : [];
    expect(kept.map(({ metric }) => metric.pod)).toEqual(["checkout-7", "checkout-119"]);
    expect(kept[0]?.values).toHaveLength(301);
    // The stack traces are cut where the analysis stops reading a line: its pattern is the same.
    expect(logs?.truncated).toEqual([{ cut: "shortened", maxChars: 1_000, texts: 46 }]);
    expect(deploy?.truncated).toBeUndefined();
    expect(deploy?.observation).toEqual(whole.actions[2]?.observation);
  });

  it("returns a bundle within its cap as it is", () => {
    const small = bundleOf([latencyOfPods(2)]);
    expect(fitBundle(small, 2 * 1024 * 1024)).toBe(small);
  });

  it("leaves out what cannot be cut small enough, saying so, and still fits", () => {
    const huge: BundleAction = {
      gadget: "Changes",
      title: "Release notes",
      connector: "http",
      window,
      observation: { kind: "json", answer: { notes: "x".repeat(200_000) }, answerField: "notes" },
    };
    const fitted = fitBundle(bundleOf([latencyOfPods(3), huge]), 24 * 1024);
    expect(bytesOf(fitted)).toBeLessThanOrEqual(24 * 1024);
    const notes = fitted.actions.find(({ title }) => title === "Release notes");
    // An answer is context, not in the verdict: its text is cut, not left out.
    expect(notes?.truncated).toEqual([{ cut: "shortened", maxChars: 1_000, texts: 1 }]);
    // A JSON answer has no list to thin and no long text: all of it or nothing.
    const inventory: BundleAction = {
      gadget: "Stock",
      title: "Inventory",
      connector: "http",
      window,
      observation: { kind: "json", answer: Object.fromEntries(Array.from({ length: 5_000 }, (_, sku) => [`sku-${sku}`, sku])), answerField: "sku-1" },
    };
    const tiny = fitBundle(bundleOf([inventory]), 4 * 1024);
    expect(bytesOf(tiny)).toBeLessThanOrEqual(4 * 1024);
    expect(tiny.actions[0]).toMatchObject({
      observation: { kind: "failed", reason: "left out of the evidence bundle: its 77 KiB did not fit the bundle's cap of 4 KiB" },
    });
    expect(tiny.actions[0]?.truncated).toEqual([{ cut: "left-out", bytes: bytesOf(inventory.observation) }]);
    expect(replayBundle(tiny)).toMatchObject({ truncated: ["Inventory"], verdict: { unchecked: [{ action: "Inventory", reason: "failed" }] } });
  });
});
