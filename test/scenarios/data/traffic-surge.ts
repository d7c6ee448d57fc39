import type { Scenario } from "./scenario.js";
import { finish, NAMESPACE, shopWorld } from "./shop-world.js";
import { clockAt, hexId, linesAt, ramp, stepAt } from "./synthetic.js";

/**
 * Load as the cause: a marketing push sends search 7× its usual requests from 7 minutes before the issue.
 * Its pods' CPU climbs to their limit within a minute and is throttled there; requests queue, p99
 * latency climbs 6×, and a few time out. No rollout, no dependency failing: search needs more replicas.
 */
export function trafficSurge(issueAt: Date): Scenario {
  const clock = clockAt(issueAt);
  const surge = clock.seconds(-7);
  const world = shopWorld(clock, {
    traffic: {
      search: {
        requestsPerSecond: ramp(surge, surge + 60, 120, 840),
        meanLatency: ramp(surge + 60, surge + 180, 0.08, 0.5),
        errorShare: ramp(surge + 90, surge + 180, 0.006, 0.03),
      },
    },
  });
  world.addServiceLogs(
    "search",
    linesAt(
      "search-timeout",
      clock.at(-5.5),
      clock.at(15),
      stepAt(surge + 90, 0, 10),
      (n) => `level=error msg="query timed out in queue" waited=${1500 + (n % 7) * 100}ms q_id=${hexId("search-q", n, 10)}`,
    ),
  );
  world.addAlert({
    name: "SearchHighLatency",
    labels: { service: "search", namespace: NAMESPACE },
    severity: "warning",
    startsAtMinutes: -3,
    summary: "search p99 latency is above 1 s.",
  });
  return { name: "traffic-surge", issueAt, request: { title: "High latency on search" }, data: finish(world) };
}
