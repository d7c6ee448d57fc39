import { describe, expect, it } from "vitest";
import { PlaybookExecutionResult } from "./execution-result.js";
import { Verdict } from "./execution-verdict.js";

const verdict: Verdict = {
  conclusion: "cause",
  cause: {
    kind: "deploy",
    subject: "checkout",
    detail: "checkout:v1.42",
    action: "Rollouts of checkout",
    onset: "2026-11-20T14:02:00.000Z",
    confidence: "high",
  },
  symptoms: [{ kind: "rise", action: "Error ratio of checkout", onset: "2026-11-20T14:03:00.000Z" }],
  background: [],
  ruledOut: [{ kind: "deploy", subject: "cart", action: "Rollouts in shop", onset: "2026-11-20T13:30:00.000Z", why: "long-before", leadMs: 1_980_000 }],
  normal: [{ action: "p99 latency of checkout", found: "within-usual-range" }],
  unchecked: [
    { action: "Deploy status", reason: "failed", error: "timed out after 15 s" },
    { action: "Pods of {{pod}}", reason: "not-run", missing: ["pod"] },
    { action: "Request rate", reason: "no-data", noData: "empty" },
  ],
};

describe("Verdict", () => {
  it("is an optional part of a result: the spec's shape without it, the same data with it", () => {
    expect(PlaybookExecutionResult.parse({ highlights: "…" })).toEqual({ highlights: "…" });
    expect(PlaybookExecutionResult.parse({ highlights: "…", verdict }).verdict).toEqual(verdict);
  });

  it("reads a kind it does not know, as a client one version behind must", () => {
    const later = { ...verdict, symptoms: [{ kind: "certificate-expiry", action: "Certificates" }] };
    expect(Verdict.parse(later).symptoms[0]?.kind).toBe("certificate-expiry");
  });

  it("refuses what is not a verdict: an unknown conclusion, a confidence or reason outside its list, an onset that is not a date-time", () => {
    const paths = (input: unknown) => Verdict.safeParse(input).error?.issues.map((issue) => issue.path.join(".")) ?? [];
    expect(paths({ ...verdict, conclusion: "maybe" })).toEqual(["conclusion"]);
    expect(paths({ ...verdict, cause: { ...verdict.cause, confidence: "certain" } })).toEqual(["cause.confidence"]);
    expect(paths({ ...verdict, unchecked: [{ action: "x", reason: "lost" }] })).toEqual(["unchecked.0.reason"]);
    expect(paths({ ...verdict, symptoms: [{ kind: "rise", action: "x", onset: "14:03" }] })).toEqual(["symptoms.0.onset"]);
  });
});
