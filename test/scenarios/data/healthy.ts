import type { Scenario } from "./scenario.js";
import { addRolloutEvents, finish, shopWorld, type Revision } from "./shop-world.js";
import { clockAt } from "./synthetic.js";

/** checkout v1.42, rolled out 50 minutes before the issue and fine since. */
export const QUIET_REVISION: Revision = { revision: 13, version: "v1.42", atMinutes: -50 };

/**
 * Healthy: someone asks about checkout errors (an alert that flapped and resolved), but nothing is wrong.
 * checkout was rolled out 50 minutes earlier and has run normally since; it logs its usual errors at
 * their usual rate; the shop's usual alerts fire for other things (Watchdog, a disk on node-3, the
 * crash-looping report generator, cart's certificate). The answer must say nothing abnormal was found.
 */
export function healthy(issueAt: Date): Scenario {
  const clock = clockAt(issueAt);
  const world = shopWorld(clock, { rollouts: { checkout: [QUIET_REVISION] } });
  addRolloutEvents(world, "checkout", QUIET_REVISION);
  return { name: "healthy", issueAt, request: { title: "High error rate on checkout" }, data: finish(world) };
}
