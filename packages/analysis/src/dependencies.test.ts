import { describe, expect, it } from "vitest";
import { alertUpstream, isPage, upstreamsNamedIn } from "./dependencies.js";
import type { AlertEvidence, Evidence, LogPatternEvidence, MetricEvidence } from "./evidence.js";
import type { Finding } from "./ranking.js";
import { bottomLineOf } from "./summarize.js";
import { judgeExecution } from "./verdict.js";

const time = new Date("2026-11-21T14:08:00Z");
const at = (clock: string) => new Date(`2026-11-21T${clock}:00Z`);
const paged = { service: "checkout" };
const upstreams = ["orders", "cart"];

function metric(action: string, ratio: number, onset: string, upstream?: string): Finding {
  const evidence: MetricEvidence = {
    kind: "metric",
    action,
    labels: {},
    seriesCount: 1,
    value: ratio,
    baseline: 1,
    low: 1,
    high: 1,
    ratio,
    severity: ratio,
    abnormal: true,
    onset: at(onset),
    baselineMs: 3_600_000,
  };
  return {
    gadget: upstream === undefined ? "Traffic of checkout" : `Upstream ${upstream} of checkout`,
    evidence,
    ...(upstream === undefined ? {} : { upstream }),
  };
}

function alert(action: string, name: string, labels: Record<string, string>, onset: string): Finding<AlertEvidence> {
  const subject = Object.entries(labels)
    .map(([label, value]) => `${label}=${value}`)
    .join(", ");
  return { gadget: "Alerts", evidence: { kind: "alert", action, name, subject, labels, onset: at(onset) } };
}

function logPattern(action: string, pattern: string, onset: string): Finding<LogPatternEvidence> {
  return {
    gadget: "Logs of checkout",
    evidence: {
      kind: "log-pattern",
      action,
      pattern,
      perMinute: 20,
      baselinePerMinute: 0,
      ratio: Infinity,
      severity: 1000,
      abnormal: true,
      onset: at(onset),
      baselineMs: 3_600_000,
    },
  };
}

const judge = (findings: readonly Finding[]) => judgeExecution(findings, { time, attributes: paged, upstreams });

describe("isPage", () => {
  it("is an alert for what was paged: every issue attribute it carries agrees, and it carries one", () => {
    const page = alert("Alerts firing for checkout", "CheckoutHighErrorRate", { namespace: "shop", service: "checkout" }, "14:05").evidence;
    expect(isPage(page, paged)).toBe(true);
    expect(isPage(page, { service: "checkout", alertname: "CheckoutHighLatency" })).toBe(false);
    expect(isPage(alert("a", "OrdersHighErrorRate", { service: "orders" }, "14:05").evidence, paged)).toBe(false);
    expect(isPage(alert("a", "DiskSpaceLow", { node: "node-3" }, "14:05").evidence, paged)).toBe(false);
    expect(isPage(page, undefined)).toBe(false);
  });
});

describe("alertUpstream and upstreamsNamedIn", () => {
  it("reads an alert for a declared upstream, by the label the issue names the paged service with", () => {
    expect(alertUpstream(alert("a", "OrdersHighErrorRate", { service: "orders" }, "14:05").evidence, { attributes: paged, upstreams })).toBe("orders");
    expect(alertUpstream(alert("a", "SearchDown", { service: "search" }, "14:05").evidence, { attributes: paged, upstreams })).toBeUndefined();
    expect(alertUpstream(alert("a", "X", { app: "orders" }, "14:05").evidence, { attributes: paged, upstreams })).toBeUndefined();
  });

  it("finds an upstream's name as a word of its own, not inside another name", () => {
    expect(upstreamsNamedIn('level=error msg="create order failed" upstream=orders status=503', upstreams)).toEqual(["orders"]);
    expect(upstreamsNamedIn("GET http://orders.shop.svc:8080/v1 failed; cart said 503", upstreams)).toEqual(["orders", "cart"]);
    expect(upstreamsNamedIn("orders-db: too many connections; reorders=3; carts", upstreams)).toEqual([]);
  });
});

describe("judgeExecution with upstreams", () => {
  it("names the upstream that turned abnormal before the paged service, by name, not the paged service's golden signals", () => {
    const judgement = judge([
      metric("Error ratio of checkout", 30, "14:01"),
      logPattern("Error logs of checkout", 'level=error msg="create order failed" upstream=orders status=<num>', "14:01"),
      alert("Alerts firing for checkout", "CheckoutHighErrorRate", { service: "checkout" }, "14:04"),
      metric("Error ratio of orders", 80, "14:00", "orders"),
      metric("p99 latency of orders", 6, "14:00", "orders"),
      alert("Alerts firing for orders", "OrdersHighErrorRate", { service: "orders" }, "14:02"),
    ]);
    expect(judgement.verdict.conclusion).toBe("cause");
    expect(judgement.verdict.cause).toEqual({
      kind: "upstream",
      subject: "orders",
      action: "Error ratio of orders",
      onset: at("14:00").toISOString(),
      confidence: "high",
    });
    expect(judgement.verdict.symptoms).toContainEqual({
      kind: "alert",
      subject: "service=orders",
      detail: "OrdersHighErrorRate",
      action: "Alerts firing for orders",
      onset: at("14:02").toISOString(),
    });
    expect(bottomLineOf(judgement, paged)).toContain("likely cause: upstream orders, Error ratio of orders");
  });

  it("names an upstream that began with the paged service only when the paged service's own logs name it", () => {
    const findings = [metric("Error ratio of checkout", 30, "14:01"), metric("Error ratio of orders", 80, "14:01", "orders")];
    expect(judge(findings).verdict.conclusion).toBe("no-cause");
    const named = judge([...findings, logPattern("Error logs of checkout", "upstream=orders status=<num>", "14:01")]).verdict;
    expect(named).toMatchObject({ conclusion: "cause", cause: { kind: "upstream", subject: "orders", confidence: "medium" } });
  });

  it("does not blame an upstream that turned abnormal after the paged service, nor one whose trouble the paged service did not follow", () => {
    expect(judge([metric("Error ratio of checkout", 30, "14:01"), metric("Error ratio of orders", 80, "14:03", "orders")]).verdict.conclusion).toBe("no-cause");
    expect(judge([metric("Error ratio of orders", 80, "14:03", "orders"), metric("p99 latency of orders", 4, "14:04", "orders")]).verdict.conclusion).toBe(
      "no-cause",
    );
  });

  it("reads another service's alert for a declared upstream as that upstream's, and names two upstreams that began together as ambiguous", () => {
    const { verdict } = judge([
      metric("Error ratio of checkout", 30, "14:03"),
      alert("Related alerts", "OrdersHighErrorRate", { service: "orders" }, "14:00"),
      metric("Error ratio of cart", 9, "14:01", "cart"),
    ]);
    expect(verdict).toMatchObject({
      conclusion: "ambiguous",
      cause: { kind: "upstream", subject: "orders", action: "Related alerts", confidence: "low" },
      alternative: { kind: "upstream", subject: "cart", action: "Error ratio of cart", confidence: "low" },
    });
  });

  it("never names the page as the cause, however early it fired", () => {
    const findings: Evidence[] = [
      alert("Alerts firing for checkout", "CheckoutHighErrorRate", { service: "checkout" }, "14:00").evidence,
      logPattern("Error logs of checkout", "timeout talking to <_>", "14:02").evidence,
    ];
    const { verdict } = judge(findings.map((evidence) => ({ gadget: "Checks", evidence })));
    expect(verdict.conclusion).toBe("no-cause");
    // The page is context, listed apart: never a symptom.
    expect(verdict.symptoms.map(({ kind }) => kind)).toEqual(["log-pattern"]);
    expect(verdict.paged?.map(({ detail }) => detail)).toEqual(["CheckoutHighErrorRate"]);
    // Without the attributes the rules cannot tell the page: an alert that fired first is a cause's kind.
    expect(
      judgeExecution(
        findings.map((evidence) => ({ gadget: "Checks", evidence })),
        { time },
      ).verdict.cause?.kind,
    ).toBe("alert");
  });
});
