import type { Scenario } from "./scenario.js";
import { finish, NAMESPACE, shopWorld } from "./shop-world.js";
import { clockAt, hexId, linesAt, type Shape } from "./synthetic.js";

/** `during` from `from` for `seconds`, `otherwise` before and after. */
const briefly =
  (from: number, seconds: number, during: number, otherwise: number): Shape =>
  (t) =>
    t >= from && t < from + seconds ? during : otherwise;

/**
 * Nothing but a blip: 5 minutes before the issue the payments provider's probe fails two scrapes in a row
 * and a few of checkout's calls to it fail; for a minute checkout answers 6 % of its requests with errors
 * and logs a handful of timeouts, then all is as before. CheckoutHighErrorRate fired on the spike (the
 * page). Nothing changed, nothing is still wrong: the honest answer is that no cause was found.
 */
export function briefBlip(issueAt: Date): Scenario {
  const clock = clockAt(issueAt);
  const blip = clock.seconds(-5);
  const world = shopWorld(clock, {
    probes: { "payments-provider": briefly(blip, 30, 0, 1) },
    dependencyErrorShare: { "payments-provider": briefly(blip, 45, 0.4, 0.002) },
    traffic: { checkout: { errorShare: briefly(blip, 60, 0.06, 0.004) } },
  });
  world.addServiceLogs(
    "checkout",
    linesAt(
      "blip-timeouts",
      clock.at(-5),
      clock.at(-4),
      () => 6,
      (n) =>
        `level=error msg="payment authorization failed" provider=payments-provider err="context deadline exceeded" order_id=ord-${81_000 + n} trace_id=${hexId("blip", n, 16)}`,
    ),
  );
  world.addAlert({
    name: "CheckoutHighErrorRate",
    labels: { service: "checkout", namespace: NAMESPACE },
    severity: "critical",
    startsAtMinutes: -4,
    summary: "More than 5% of checkout requests fail.",
  });
  return { name: "brief-blip", issueAt, request: { title: "High error rate on checkout" }, data: finish(world) };
}
