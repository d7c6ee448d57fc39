import type { Scenario } from "./scenario.js";
import { finish, NAMESPACE, shopWorld } from "./shop-world.js";
import { clockAt, hexId, linesAt, ramp, stepAt } from "./synthetic.js";

/**
 * An upstream dependency outage: the external payments provider stops accepting connections 5 minutes
 * before the issue. Its blackbox probe fails at once, almost every call checkout makes to it fails (the
 * Envoy sidecar logs "upstream connect error" by the dozen in Elasticsearch), checkout answers 28 % of
 * its requests with errors and slower, and logs a payment error it never logged before. No rollout of
 * checkout for three days; the other dependency (fraud-check) is fine.
 */
export function upstreamOutage(issueAt: Date): Scenario {
  const clock = clockAt(issueAt);
  const down = clock.seconds(-5);
  const world = shopWorld(clock, {
    probes: { "payments-provider": stepAt(down, 1, 0) },
    dependencyErrorShare: { "payments-provider": ramp(down, down + 30, 0.002, 0.97) },
    traffic: {
      checkout: {
        errorShare: ramp(down, down + 30, 0.004, 0.28),
        meanLatency: ramp(down, down + 30, 0.06, 0.25),
      },
    },
  });
  world.addServiceLogs(
    "checkout",
    linesAt(
      "payments-refused",
      clock.at(-5),
      clock.at(15),
      stepAt(down, 0, 25),
      (n) =>
        `level=error msg="payment authorization failed" provider=payments-provider err="dial tcp 203.0.113.10:443: connect: connection refused" order_id=ord-${60_000 + n} trace_id=${hexId("pay", n, 16)}`,
    ),
  );
  world.addAlert({
    name: "ProbeFailed",
    labels: { service: "checkout", dependency: "payments-provider", instance: "https://api.payments.example/health", namespace: NAMESPACE },
    severity: "critical",
    startsAtMinutes: -4,
    summary: "The payments provider does not answer its health check.",
  });
  world.addAlert({
    name: "CheckoutHighErrorRate",
    labels: { service: "checkout", namespace: NAMESPACE },
    severity: "critical",
    startsAtMinutes: -2,
    summary: "More than 5% of checkout requests fail.",
  });
  return { name: "upstream-outage", issueAt, request: { title: "High error rate on checkout" }, data: finish(world) };
}
