import type { Scenario } from "./scenario.js";
import { addRolloutEvents, finish, imageOf, NAMESPACE, type PodInfo, type Revision, shopWorld } from "./shop-world.js";
import { clockAt } from "./synthetic.js";

/** search v3.1, rolled out 3 h 10 min before the issue: it leaks memory. */
export const LEAKING_REVISION: Revision = { revision: 45, version: "v3.1", atMinutes: -190 };
/** When each of its pods reaches its memory limit and is OOM-killed, in minutes from the issue (by replica). */
const KILLS = [-10, -6, 2] as const;
/** A fresh search process uses this share of its limit, as the old release did all along. */
const FRESH_SHARE = 0.39;

/**
 * A release that leaks memory, hours before its symptoms: search v3.1 goes out 190 minutes before the
 * issue. Each of its pods starts where the old ones held (39 % of its 1 GiB limit) and climbs steadily
 * until it reaches the limit and the kernel OOM-kills it, 10 and 6 minutes before the issue and 2 after
 * (the restarted container climbs again from where it started). ContainerMemoryNearLimit fires 20
 * minutes before the issue; the kubelet's events of the restarts name the new image. Traffic, latency
 * and errors stay normal; the shop's usual noise goes on (cart's rollout 35 minutes before, standing
 * alerts, a crash-looping report generator). The metrics go back 400 minutes, so that the climb's start
 * can be found.
 */
export function memoryLeak(issueAt: Date): Scenario {
  const clock = clockAt(issueAt);
  const released = clock.seconds(LEAKING_REVISION.atMinutes);
  const replicaOf = (pod: PodInfo) => Math.round((pod.from - released) / 20);
  const share = (pod: PodInfo, t: number) => {
    if (pod.revision !== LEAKING_REVISION) return FRESH_SHARE;
    const kill = clock.seconds(KILLS[replicaOf(pod)] ?? 60);
    // From its start to its limit at its kill, then again from a restart a few seconds later.
    const perSecond = (1 - FRESH_SHARE) / (kill - pod.from);
    const since = t < kill ? pod.from : kill + 12;
    return Math.min(1, FRESH_SHARE + perSecond * Math.max(0, t - since));
  };
  const world = shopWorld(clock, { rollouts: { search: [LEAKING_REVISION] }, podMemory: { search: share }, historyMinutes: 400 });
  addRolloutEvents(world, "search", LEAKING_REVISION);

  const leaking = world.pods.filter((pod) => pod.revision === LEAKING_REVISION).sort((a, b) => a.from - b.from);
  for (const pod of leaking) {
    const killedAt = KILLS[replicaOf(pod)];
    if (killedAt === undefined) continue;
    world.setPodStatus(pod.name, { restartCount: 1, lastTermination: { reason: "OOMKilled", exitCode: 137, atMinutes: killedAt } });
    // The kubelet restarts the container: normal events that name the release's image.
    const restart = killedAt + 0.1;
    const image = imageOf("search", LEAKING_REVISION);
    world.addEvent({
      namespace: NAMESPACE,
      kind: "Pod",
      name: pod.name,
      reason: "Pulled",
      message: `Container image "${image}" already present on machine`,
      warning: false,
      firstMinutes: restart,
      host: pod.node,
    });
    world.addEvent({
      namespace: NAMESPACE,
      kind: "Pod",
      name: pod.name,
      reason: "Created",
      message: "Created container search",
      warning: false,
      firstMinutes: restart,
      host: pod.node,
    });
    world.addEvent({
      namespace: NAMESPACE,
      kind: "Pod",
      name: pod.name,
      reason: "Started",
      message: "Started container search",
      warning: false,
      firstMinutes: restart + 0.05,
      host: pod.node,
    });
  }
  world.addAlert({
    name: "ContainerMemoryNearLimit",
    labels: { service: "search", namespace: NAMESPACE, container: "search" },
    severity: "warning",
    startsAtMinutes: -20,
    summary: "A search container uses more than 90% of its memory limit.",
  });
  return { name: "memory-leak", issueAt, request: { title: "Pods of search OOM-killed" }, data: finish(world) };
}
