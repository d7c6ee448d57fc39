import type { KubernetesEvent, Pod } from "@pes/contracts";

/**
 * How long before the collection time a set of kubectl outputs was read. The benchmark's collector ran
 * its commands over half a minute to a few minutes and stamped the end (`collection_timestamp`), while
 * kubectl prints ages relative to when each command ran; read against the stamp, every age comes out
 * that much too old. A pod's `Scheduled` event is within a second of its start time (which describe
 * prints as a date), so the median of the differences is the lag of the output that aged them.
 */
export function lagOfScheduledEvents(events: readonly KubernetesEvent[], pods: ReadonlyMap<string, Pod>): number {
  const differences: number[] = [];
  for (const event of events) {
    if (event.reason !== "Scheduled" || event.involvedObject.kind !== "Pod" || (event.count ?? 1) > 1) continue;
    const started = pods.get(event.involvedObject.name ?? "")?.status?.startTime;
    const at = event.lastTimestamp;
    if (started === undefined || at === undefined || at === null) continue;
    differences.push(Date.parse(at) - Date.parse(started));
  }
  return median(differences);
}

/** The lag of a `get pods` table: its pods' creation times (read from AGE) against their start times. */
export function lagOfListedPods(listed: ReadonlyMap<string, Pod>, described: ReadonlyMap<string, Pod>): number {
  const differences: number[] = [];
  for (const [name, pod] of listed) {
    const started = described.get(name)?.status?.startTime;
    const created = pod.metadata.creationTimestamp;
    if (started !== undefined && created !== undefined) differences.push(Date.parse(created) - Date.parse(started));
  }
  return median(differences);
}

/** Whole seconds: kubectl's ages are, and a start time is. Zero when nothing tells. */
function median(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted[Math.floor(sorted.length / 2)] ?? 0;
  return Math.max(0, Math.round(middle / 1000) * 1000);
}

function shifted(time: string | null | undefined, ms: number): string | undefined {
  return typeof time === "string" ? new Date(Date.parse(time) + ms).toISOString() : undefined;
}

/** Events with their times moved back by `lag`. */
export function shiftEvents(events: readonly KubernetesEvent[], lag: number): KubernetesEvent[] {
  if (lag === 0) return [...events];
  const ms = -lag;
  return events.map((event) => {
    const first = shifted(event.firstTimestamp, ms);
    const last = shifted(event.lastTimestamp, ms);
    return { ...event, ...(first === undefined ? {} : { firstTimestamp: first }), ...(last === undefined ? {} : { lastTimestamp: last }) };
  });
}

/** A time read from an age, moved back by `lag`. */
export function shiftTime(time: string | undefined, lag: number): string | undefined {
  return lag === 0 ? time : shifted(time, -lag);
}
