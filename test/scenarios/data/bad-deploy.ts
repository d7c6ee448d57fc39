import type { Scenario } from "./scenario.js";
import { addRolloutEvents, finish, NAMESPACE, shopWorld, type Revision } from "./shop-world.js";
import { clockAt, hexId, linesAt, ramp, stepAt } from "./synthetic.js";

/** checkout v1.42, rolled out 8 minutes before the issue. */
export const BAD_DEPLOY_REVISION: Revision = { revision: 13, version: "v1.42", atMinutes: -8 };

/**
 * A bad deploy followed by an error spike: checkout v1.42 is rolled out 8 minutes before the issue; as its
 * pods take traffic (from 7 minutes before), 14 % of checkout's requests fail with a NullPointerException
 * that was never logged before, and CheckoutHighErrorRate fires 3 minutes before the issue. Latency,
 * dependencies and pod restarts stay normal; the old pods' CPU series end with the rollout (churn).
 */
export function badDeploy(issueAt: Date): Scenario {
  const clock = clockAt(issueAt);
  const world = shopWorld(clock, {
    rollouts: { checkout: [BAD_DEPLOY_REVISION] },
    traffic: { checkout: { errorShare: ramp(clock.seconds(-7), clock.seconds(-6), 0.004, 0.14) } },
  });
  world.addServiceLogs(
    "checkout",
    linesAt("npe", clock.at(-7), clock.at(15), stepAt(clock.seconds(-7), 0, 20), (n) =>
      [
        'level=error msg="payment capture failed"',
        'err="java.lang.NullPointerException: Cannot invoke \\"Money.amount()\\" because \\"discount\\" is null"',
        `order_id=ord-${52_000 + n * 3} trace_id=${hexId("npe-trace", n, 16)}`,
      ].join(" "),
    ),
  );
  world.addAlert({
    name: "CheckoutHighErrorRate",
    labels: { service: "checkout", namespace: NAMESPACE },
    severity: "critical",
    startsAtMinutes: -3,
    summary: "More than 5% of checkout requests fail.",
  });
  addRolloutEvents(world, "checkout", BAD_DEPLOY_REVISION);
  return { name: "bad-deploy", issueAt, request: { title: "High error rate on checkout" }, data: finish(world) };
}
