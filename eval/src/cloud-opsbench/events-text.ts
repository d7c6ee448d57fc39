import type { KubernetesEvent } from "@pes/contracts";
import { type DescribeField, before, eventAge, parseTable } from "./kubectl-text.js";

/** The object an event is about: `{ kind: "Pod", name, namespace }`. */
export interface InvolvedObject {
  kind: string;
  name: string;
  namespace?: string;
}

/** kubectl's lower-case resource names in `get events`' OBJECT column (`pod/x`), as API kinds. */
const KINDS: Record<string, string> = {
  pod: "Pod",
  replicaset: "ReplicaSet",
  deployment: "Deployment",
  statefulset: "StatefulSet",
  daemonset: "DaemonSet",
  service: "Service",
  endpoints: "Endpoints",
  endpointslice: "EndpointSlice",
  node: "Node",
  persistentvolumeclaim: "PersistentVolumeClaim",
  persistentvolume: "PersistentVolume",
  resourcequota: "ResourceQuota",
  job: "Job",
  cronjob: "CronJob",
  namespace: "Namespace",
  serviceaccount: "ServiceAccount",
  configmap: "ConfigMap",
  horizontalpodautoscaler: "HorizontalPodAutoscaler",
};

/** Kinds without a namespace: their events are listed in `default`, but are about no namespace's object. */
const CLUSTER_SCOPED = new Set(["Node", "PersistentVolume", "StorageClass", "Namespace"]);

export function kindOf(resource: string): string {
  const lower = resource.toLowerCase();
  return KINDS[lower] ?? lower.charAt(0).toUpperCase() + lower.slice(1);
}

interface EventRow {
  type: string;
  reason: string;
  age: string;
  from?: string;
  message: string;
}

function toEvent(row: EventRow, object: InvolvedObject, now: Date, index: number): KubernetesEvent {
  const age = eventAge(row.age);
  const last = age.lastMs === undefined ? undefined : before(now, age.lastMs);
  const first = age.firstMs === undefined ? last : before(now, age.firstMs);
  // `kubelet, worker-01` (older kubectl) or `kubelet`: the component and the node it runs on.
  const [component, host] = (row.from ?? "").split(",").map((part) => part.trim());
  return {
    metadata: { name: `${object.name}.${index}`, ...(object.namespace === undefined ? {} : { namespace: object.namespace }) },
    involvedObject: { kind: object.kind, name: object.name, ...(object.namespace === undefined ? {} : { namespace: object.namespace }) },
    type: row.type,
    reason: row.reason,
    message: row.message,
    count: age.count ?? 1,
    ...(first === undefined ? {} : { firstTimestamp: first }),
    ...(last === undefined ? {} : { lastTimestamp: last }),
    ...(component === undefined || component === "" ? {} : { source: { component, ...(host === undefined ? {} : { host }) } }),
  };
}

/**
 * The `Events:` section of a describe output (`Type Reason Age From Message`), as events of the object
 * described; ages are read against `now`, the time of the collection.
 */
export function describedEvents(found: DescribeField | undefined, object: InvolvedObject, now: Date): KubernetesEvent[] {
  if (found === undefined || found.lines.length === 0) return [];
  return parseTable(found.lines, /^\s*Type\s+Reason\s+Age/)
    .filter((row) => row.Type !== undefined && row.Type !== "")
    .map((row, index) =>
      toEvent({ type: row.Type ?? "", reason: row.Reason ?? "", age: row.Age ?? "", from: row.From ?? "", message: row.Message ?? "" }, object, now, index),
    );
}

const EVENT_LINE = /^(\S+(?:\s+\(x\d+ over \S+\))?)\s+(Normal|Warning)\s+(\S+)\s+(\S+)\s+(.*)$/;

/**
 * A `kubectl get events -n <ns>` listing (`LAST SEEN  TYPE  REASON  OBJECT  MESSAGE`, with or without
 * its header, as `| tail` leaves it). Read line by line: its message column is free text.
 */
export function listedEvents(text: string, namespace: string, now: Date): KubernetesEvent[] {
  const events: KubernetesEvent[] = [];
  for (const line of text.split("\n")) {
    const match = EVENT_LINE.exec(line.trim());
    if (match === null) continue;
    const [, age, type, reason, objectRef, message] = match;
    const slash = (objectRef ?? "").indexOf("/");
    const kind = kindOf(slash < 0 ? "" : (objectRef ?? "").slice(0, slash));
    const object: InvolvedObject = {
      kind,
      name: slash < 0 ? (objectRef ?? "") : (objectRef ?? "").slice(slash + 1),
      ...(namespace === "" || CLUSTER_SCOPED.has(kind) ? {} : { namespace }),
    };
    const event = toEvent({ type: type ?? "", reason: reason ?? "", age: age ?? "", message: (message ?? "").trim() }, object, now, events.length);
    events.push(namespace === "" ? event : { ...event, metadata: { ...event.metadata, namespace } });
  }
  return events;
}

/**
 * One event per object, reason and message: the same event is listed by `get events` and again in its
 * object's describe (which also says who reported it). The merged one keeps the larger count, the
 * earliest first and latest last time, and a source when either has one; names are made unique.
 */
export function mergeEvents(events: readonly KubernetesEvent[]): KubernetesEvent[] {
  const byKey = new Map<string, KubernetesEvent>();
  for (const event of events) {
    const key = [event.involvedObject.kind, event.involvedObject.namespace, event.involvedObject.name, event.reason, event.message].join("\u0000");
    const known = byKey.get(key);
    if (known === undefined) {
      byKey.set(key, event);
      continue;
    }
    byKey.set(key, {
      ...known,
      count: Math.max(known.count ?? 1, event.count ?? 1),
      ...earliest("firstTimestamp", known.firstTimestamp, event.firstTimestamp),
      ...latest("lastTimestamp", known.lastTimestamp, event.lastTimestamp),
      ...(known.source === undefined && event.source !== undefined ? { source: event.source } : {}),
    });
  }
  const merged = [...byKey.values()].sort((a, b) => (a.lastTimestamp ?? "").localeCompare(b.lastTimestamp ?? ""));
  return merged.map((event, index) => ({
    ...event,
    metadata: { ...event.metadata, name: `${event.involvedObject.name}.${index.toString(16).padStart(4, "0")}` },
  }));
}

function earliest(key: "firstTimestamp", a: string | null | undefined, b: string | null | undefined): Partial<Record<typeof key, string>> {
  const times = [a, b].filter((time): time is string => typeof time === "string").sort();
  return times[0] === undefined ? {} : { [key]: times[0] };
}

function latest(key: "lastTimestamp", a: string | null | undefined, b: string | null | undefined): Partial<Record<typeof key, string>> {
  const last = [a, b]
    .filter((time): time is string => typeof time === "string")
    .sort()
    .at(-1);
  return last === undefined ? {} : { [key]: last };
}
