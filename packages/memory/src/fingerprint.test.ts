import type { Verdict } from "@pes/contracts";
import { describe, expect, it } from "vitest";
import { fingerprintOf, groupOf } from "./fingerprint.js";
import { normaliseSubject } from "./normalisation.js";
import { compare } from "./similarity.js";

const verdict = (pod: string, version: string, orderId: number): Verdict => ({
  conclusion: "cause",
  cause: { kind: "oom", subject: `pod/${pod}`, detail: `OOMKilled: ${pod} exceeded 512Mi at 2026-11-27T18:26:00Z`, action: "Warnings", confidence: "high" },
  symptoms: [
    { kind: "oom", subject: `pod/${pod}`, action: "Warnings" },
    { kind: "log-pattern", detail: `level=error msg="capture failed" order_id=${orderId} version=${version} from 10.0.3.${orderId % 200}`, action: "Errors" },
  ],
  background: [],
  paged: [{ kind: "alert", subject: "service=recommendations", detail: "RecommendationsOOM", action: "Alerts" }],
  ruledOut: [],
  normal: [],
  unchecked: [],
});

describe("fingerprintOf", () => {
  it("keeps the same fingerprint for the same incident whatever its numbers, pod hashes, times and addresses", () => {
    const a = fingerprintOf({
      executionId: "a",
      playbook: "memory",
      at: new Date(0),
      attributes: { node: "node-2" },
      verdict: verdict("recommendations-7d9f8b6c5d-x2x7q", "v1.2", 4242),
    });
    const b = fingerprintOf({
      executionId: "b",
      playbook: "memory",
      at: new Date(1),
      attributes: { node: "node-2" },
      verdict: verdict("recommendations-5c4b9d7f68-q8zkp", "v1.3", 917),
    });
    const { id: _a, at: _atA, ...restA } = a;
    const { id: _b, at: _atB, ...restB } = b;
    expect(restA).toEqual(restB);
    expect(a.cause?.subject).toBe("pod/recommendations");
    expect(a.alerts).toEqual(["RecommendationsOOM"]);
    expect(a.symptoms).toEqual(["log-pattern", "oom"]);
    expect(groupOf(a)).toBe(groupOf(b));
    expect(compare(a, b)).toMatchObject({ similarity: 1, sharesIncident: true, differed: [] });
  });

  it("keeps the names that are an object's identity", () => {
    expect(normaliseSubject("node/node-2")).toBe("node/node-2");
    expect(normaliseSubject("db=orders-db")).toBe("db=orders-db");
    expect(normaliseSubject("pod/db-0")).toBe("pod/db-0");
    expect(normaliseSubject("pod/api-proxy")).toBe("pod/api-proxy");
    expect(normaliseSubject("namespace=shop, pod=checkout-7d9f8b6c5d-x2x7q")).toBe("namespace=shop, pod=checkout");
    expect(normaliseSubject("instance=10.0.3.7:9100")).toBe("instance=<ip>:9100");
  });

  it("says field by field what differs between two incidents", () => {
    const now = fingerprintOf({
      executionId: "n",
      playbook: "memory",
      at: new Date(0),
      attributes: { node: "node-2" },
      verdict: verdict("recommendations-7d9f8b6c5d-x2x7q", "v1", 1),
    });
    const then = fingerprintOf({
      executionId: "t",
      playbook: "memory",
      at: new Date(0),
      attributes: { node: "node-3" },
      verdict: { ...verdict("recommendations-7d9f8b6c5d-x2x7q", "v1", 1), paged: [] },
    });
    const comparison = compare(now, then);
    expect(comparison.differed).toEqual([
      { field: "alert", now: "RecommendationsOOM" },
      { field: "attribute.node", now: "node-2", past: "node-3" },
    ]);
    expect(comparison.matched.map((match) => match.field)).toEqual([
      "cause.kind",
      "cause.subject",
      "cause.detail",
      "conclusion",
      "symptom.kind",
      "symptom.kind",
      "log-template",
      "playbook",
    ]);
    expect(comparison.similarity).toBeLessThan(1);
  });
});
