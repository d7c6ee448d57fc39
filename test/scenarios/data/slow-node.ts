import type { Scenario } from "./scenario.js";
import { finish, shopWorld } from "./shop-world.js";
import { clockAt, ramp } from "./synthetic.js";

/**
 * A cause on one node: node-2's disk saturates 8 minutes before the issue (its I/O wait climbs from 2 %
 * to 45 % of CPU time within a minute), and every pod on node-2 answers about seven times slower from a
 * minute later; NodeDiskIOSaturation fires for node-2 5 minutes before the issue. Catalog, asked about,
 * runs one of its four pods on node-2: its p99 latency on node-2 jumps, on node-1 and node-3 it holds.
 * No rollout of catalog; errors stay normal; the shop's usual noise goes on (DiskSpaceLow on node-3 for
 * hours, cart's rollout 35 minutes before, a crash-looping report generator).
 */
export function slowNode(issueAt: Date): Scenario {
  const clock = clockAt(issueAt);
  const world = shopWorld(clock, {
    nodeIowait: { "node-2": ramp(clock.seconds(-8), clock.seconds(-7), 0.02, 0.45) },
    nodeLatency: { "node-2": ramp(clock.seconds(-7), clock.seconds(-6), 1, 7) },
  });
  world.addAlert({
    name: "NodeDiskIOSaturation",
    labels: { node: "node-2", instance: "node-2:9100", device: "nvme0n1" },
    severity: "warning",
    startsAtMinutes: -5,
    summary: "Disk IO queue (aqu-sz) on nvme0n1 of node-2 is high.",
  });
  return { name: "slow-node", issueAt, request: { title: "Slow pods of catalog" }, data: finish(world) };
}
