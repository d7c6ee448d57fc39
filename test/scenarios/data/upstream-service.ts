import type { Scenario } from "./scenario.js";
import { finish, NAMESPACE, shopWorld } from "./shop-world.js";
import { clockAt, hexId, linesAt, ramp, stepAt } from "./synthetic.js";

/**
 * A cause in another service: orders, which checkout calls to place an order, starts failing 8 minutes
 * before the issue (a third of its requests answer 503, and slowly), and fires its own alert 2 minutes
 * later. A minute after orders, checkout's errors climb and it logs, for every failed order, that orders
 * answered 503; its own alert (the page) fires last. Nothing changed in checkout: no rollout, its
 * dependencies' probes are up. The answer is orders, not checkout's error ratio.
 */
export function upstreamService(issueAt: Date): Scenario {
  const clock = clockAt(issueAt);
  const failing = clock.seconds(-8);
  const following = clock.seconds(-7);
  const world = shopWorld(clock, {
    traffic: {
      orders: { errorShare: ramp(failing, failing + 30, 0.003, 0.34), meanLatency: ramp(failing, failing + 30, 0.05, 0.6) },
      checkout: { errorShare: ramp(following, following + 30, 0.004, 0.16) },
    },
  });
  world.addServiceLogs(
    "checkout",
    linesAt(
      "orders-503",
      clock.at(-7),
      clock.at(15),
      stepAt(following, 0, 14),
      (n) =>
        `level=error msg="create order failed" upstream=orders status=503 err="503 Service Unavailable" order_id=ord-${70_000 + n} trace_id=${hexId("ord503", n, 16)}`,
    ),
  );
  world.addServiceLogs(
    "orders",
    linesAt(
      "orders-pool",
      clock.at(-8),
      clock.at(15),
      stepAt(failing, 0, 20),
      (n) => `level=error msg="request rejected: worker pool exhausted" pool=order-writers size=32 request_id=${hexId("pool", n, 12)}`,
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
  return { name: "upstream-service", issueAt, request: { title: "High error rate on checkout" }, data: finish(world) };
}
