import type { Scenario } from "./scenario.js";
import { finish, NAMESPACE, shopWorld } from "./shop-world.js";
import { clockAt, ramp } from "./synthetic.js";

/**
 * Bucket bounds fine enough for a service that answers in half a millisecond (catalog, from memory) and
 * one that takes seconds: the default ones start at 25 ms.
 */
const FINE_BUCKETS = [0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

/** The mean latency (s) of a service whose calls the storefront's delay holds up: a p90 of about 2 s. */
const HELD_UP = 0.87;

/**
 * A slowdown that begins in the storefront: from 8 minutes before the issue its pods delay every packet
 * they send (a network delay on their interface). Its p90 latency goes from 25 ms to about 9 s; every
 * service it calls answers its calls slower on the way, their p90 rising to about 2 s: cart, search,
 * recommendations, and catalog, whose normal is half a millisecond, so that catalog's rise against its
 * own normal is the largest by far. From 4 minutes before the issue the storefront, stalled, stops
 * calling recommendations (it fetches them last, once a page's time is spent), whose requests fall to
 * zero. checkout and orders, which the browsers call directly, hold their pace; so do checkout's calls
 * to catalog and cart. Tempo counts who calls whom (traces_service_graph_request_total); the latency
 * alert fires for the storefront. No rollout; the shop's usual noise goes on.
 */
export function slowStorefront(issueAt: Date): Scenario {
  const clock = clockAt(issueAt);
  const delayed = (normal: number, held: number) => ramp(clock.seconds(-8), clock.seconds(-7.5), normal, held);
  const world = shopWorld(clock, {
    withStorefront: true,
    latencyBuckets: FINE_BUCKETS,
    traffic: {
      storefront: { meanLatency: delayed(0.011, 3.8) },
      catalog: { meanLatency: delayed(0.00022, HELD_UP) },
      cart: { meanLatency: delayed(0.02, HELD_UP) },
      search: { meanLatency: delayed(0.08, HELD_UP) },
      recommendations: {
        meanLatency: delayed(0.04, HELD_UP),
        requestsPerSecond: ramp(clock.seconds(-4), clock.seconds(-3), 60, 0),
      },
    },
  });
  world.addAlert({
    name: "StorefrontSlowRequests",
    labels: { service: "storefront", namespace: NAMESPACE },
    severity: "critical",
    startsAtMinutes: -4,
    summary: "storefront p90 latency is above 1 s.",
  });
  return { name: "slow-storefront", issueAt, request: { title: "Slow requests on storefront" }, data: finish(world) };
}
