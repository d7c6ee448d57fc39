import type { Scenario } from "./scenario.js";
import { finish, NAMESPACE, shopWorld } from "./shop-world.js";
import { clockAt, ramp, type Shape } from "./synthetic.js";

/**
 * A node under memory pressure OOM-killing pods: from 25 minutes before the issue, recommendations
 * (both replicas on node-2) leaks memory; node-2's memory in use climbs from 52 % to 97 % over 17
 * minutes, major page faults multiply, and the kernel OOM-kills a recommendations container 7 and 4
 * minutes before the issue (each kill frees a little, the leak fills it again). node-1 and node-3 stay
 * where they were; the report generator keeps crash-looping on node-1 as it has for hours.
 */
export function nodeOom(issueAt: Date): Scenario {
  const clock = clockAt(issueAt);
  const climb = ramp(clock.seconds(-25), clock.seconds(-8), 0.52, 0.97);
  const afterKill = (at: number, next: number): Shape => ramp(clock.seconds(at), clock.seconds(next), 0.9, 0.97);
  const memory: Shape = (t) => (t < clock.seconds(-7) ? climb(t) : t < clock.seconds(-4) ? afterKill(-7, -5)(t) : afterKill(-4, -2)(t));
  const world = shopWorld(clock, {
    placement: { recommendations: "node-2" },
    nodeMemoryUsed: { "node-2": memory },
    nodeMajorFaults: { "node-2": ramp(clock.seconds(-12), clock.seconds(-8), 3, 60) },
  });
  const victims = world.pods.filter((pod) => pod.service === "recommendations" && pod.until === undefined);
  const [first, second] = victims;
  if (first === undefined || second === undefined) throw new Error("recommendations needs two pods");
  world.setPodStatus(second.name, { restartCount: 1, lastTermination: { reason: "OOMKilled", exitCode: 137, atMinutes: -7 } });
  world.setPodStatus(first.name, { restartCount: 1, lastTermination: { reason: "OOMKilled", exitCode: 137, atMinutes: -4 } });
  world.addEvent({
    namespace: "default",
    kind: "Node",
    name: "node-2",
    reason: "SystemOOM",
    message: "System OOM encountered, victim process: python3, pid: 28714",
    warning: true,
    firstMinutes: -7,
    lastMinutes: -4,
    count: 2,
    host: "node-2",
  });
  world.addEvent({
    namespace: "default",
    kind: "Node",
    name: "node-2",
    reason: "EvictionThresholdMet",
    message: "Attempting to reclaim memory",
    warning: true,
    firstMinutes: -6,
    host: "node-2",
  });
  // Noise: node-1's image garbage collection, a normal event on another node.
  world.addEvent({
    namespace: "default",
    kind: "Node",
    name: "node-1",
    reason: "ImageGCFailed",
    message: "failed to garbage collect required amount of images. Wanted to free 524288000 bytes, but freed 0 bytes",
    warning: true,
    firstMinutes: -40,
    lastMinutes: -10,
    count: 7,
    host: "node-1",
  });
  for (const pod of victims) {
    world.addEvent({
      namespace: NAMESPACE,
      kind: "Pod",
      name: pod.name,
      reason: "Pulled",
      message: 'Container image "registry.shop.example/recommendations:v0.9" already present on machine',
      warning: false,
      firstMinutes: pod === first ? -4 : -7,
      host: "node-2",
    });
  }
  world.addAlert({
    name: "NodeMemoryHighUtilization",
    labels: { node: "node-2", instance: "node-2:9100" },
    severity: "warning",
    startsAtMinutes: -12,
    summary: "Memory on node-2 is more than 90% used.",
  });
  return { name: "node-oom", issueAt, request: { title: "Memory pressure on node-2" }, data: finish(world) };
}
