import type { Scenario } from "./scenario.js";
import { addRolloutEvents, finish, NAMESPACE, shopWorld, type Revision } from "./shop-world.js";
import { clockAt, hexId, linesAt, ramp, stepAt } from "./synthetic.js";

/** catalog v2.8, rolled out 25 minutes before the issue: 19 quiet minutes before anything moves. */
export const HARMLESS_REVISION: Revision = { revision: 8, version: "v2.8", atMinutes: -25 };

/**
 * A deploy happened but is not the cause: catalog v2.8 goes out 25 minutes before the issue and runs
 * normally for 19 minutes. Then a crawler triples catalog's traffic (from 6 minutes before the issue); a
 * minute later latency climbs 4×, errors follow as the service sheds load, and CatalogHighLatency fires.
 * The first symptom is the traffic, the deploy is context: rolling it back would not help.
 */
export function deployNotCause(issueAt: Date): Scenario {
  const clock = clockAt(issueAt);
  const world = shopWorld(clock, {
    rollouts: { catalog: [HARMLESS_REVISION] },
    traffic: {
      catalog: {
        requestsPerSecond: ramp(clock.seconds(-6), clock.seconds(-5), 160, 520),
        meanLatency: ramp(clock.seconds(-5), clock.seconds(-3), 0.035, 0.16),
        errorShare: ramp(clock.seconds(-4), clock.seconds(-3), 0.003, 0.025),
      },
    },
  });
  world.addServiceLogs(
    "catalog",
    linesAt(
      "shed",
      clock.at(-4),
      clock.at(15),
      stepAt(clock.seconds(-4), 0, 15),
      (n) =>
        `level=error msg="request queue full, shedding load" queue=512 inflight=${480 + (n % 32)} client_ip=203.0.113.${40 + (n % 8)} trace_id=${hexId("shed", n, 16)}`,
    ),
  );
  world.addAlert({
    name: "CatalogHighLatency",
    labels: { service: "catalog", namespace: NAMESPACE },
    severity: "warning",
    startsAtMinutes: -2,
    summary: "catalog p99 latency is above 500 ms.",
  });
  addRolloutEvents(world, "catalog", HARMLESS_REVISION);
  world.addEvent({
    namespace: NAMESPACE,
    kind: "HorizontalPodAutoscaler",
    name: "catalog",
    reason: "SuccessfulRescale",
    message: "New size: 8; reason: cpu resource utilization (percentage of request) above target",
    warning: false,
    firstMinutes: -4,
    component: "horizontal-pod-autoscaler",
  });
  return { name: "deploy-not-cause", issueAt, request: { title: "High latency on catalog" }, data: finish(world) };
}
