import type { Scenario } from "./scenario.js";
import { finish, NAMESPACE, shopWorld } from "./shop-world.js";
import { clockAt, hexId, linesAt, ramp, stepAt } from "./synthetic.js";

/**
 * Two candidates too close to tell apart: orders, which checkout calls, starts failing 8 minutes before
 * the issue, and a minute later the external payments provider stops answering (its probe fails, and
 * checkout's calls to it). checkout's errors climb with the second, and its logs name both. Which one
 * hurts checkout more the evidence cannot say: the answer names both, each with what shows it.
 */
export function twoCauses(issueAt: Date): Scenario {
  const clock = clockAt(issueAt);
  const ordersFailing = clock.seconds(-8);
  const providerDown = clock.seconds(-7);
  const world = shopWorld(clock, {
    probes: { "payments-provider": stepAt(providerDown, 1, 0) },
    dependencyErrorShare: { "payments-provider": ramp(providerDown, providerDown + 30, 0.002, 0.95) },
    traffic: {
      orders: { errorShare: ramp(ordersFailing, ordersFailing + 30, 0.003, 0.3), meanLatency: ramp(ordersFailing, ordersFailing + 30, 0.05, 0.5) },
      checkout: { errorShare: ramp(providerDown, providerDown + 30, 0.004, 0.3) },
    },
  });
  world.addServiceLogs(
    "checkout",
    linesAt(
      "two-orders",
      clock.at(-7),
      clock.at(15),
      stepAt(providerDown, 0, 8),
      (n) =>
        `level=error msg="create order failed" upstream=orders status=503 err="503 Service Unavailable" order_id=ord-${72_000 + n} trace_id=${hexId("two-ord", n, 16)}`,
    ),
  );
  world.addServiceLogs(
    "checkout",
    linesAt(
      "two-payments",
      clock.at(-7),
      clock.at(15),
      stepAt(providerDown, 0, 20),
      (n) =>
        `level=error msg="payment authorization failed" provider=payments-provider err="dial tcp 203.0.113.10:443: connect: connection refused" order_id=ord-${64_000 + n} trace_id=${hexId("two-pay", n, 16)}`,
    ),
  );
  world.addAlert({
    name: "OrdersHighErrorRate",
    labels: { service: "orders", namespace: NAMESPACE },
    severity: "critical",
    startsAtMinutes: -6,
    summary: "More than 5% of orders requests fail.",
  });
  world.addAlert({
    name: "CheckoutHighErrorRate",
    labels: { service: "checkout", namespace: NAMESPACE },
    severity: "critical",
    startsAtMinutes: -4,
    summary: "More than 5% of checkout requests fail.",
  });
  return { name: "two-causes", issueAt, request: { title: "High error rate on checkout" }, data: finish(world) };
}
