import type { Container, KubernetesEvent, KubernetesState, Pod, PodSpec } from "@pes/contracts";
import type { FaultEvidence } from "./evidence.js";

/** A fault as a check finds it, before it is cited by its action. */
export type Fault = Omit<FaultEvidence, "kind" | "action" | "link">;

/** A workload as the state shows it: its pods' template, how many it wants, how many it has and are ready. */
export interface Workload {
  /** `deployment/adservice`, `statefulset/redis`, `daemonset/agent`, or `pod/<name>` for a bare pod. */
  ref: string;
  name: string;
  spec?: PodSpec;
  /** The labels its pods carry (its template's). */
  labels: Readonly<Record<string, string>>;
  desired?: number;
  ready?: number;
  pods: Pod[];
}

/**
 * One namespace's state, indexed for the checks: each pod's workload, the workloads, the events by the
 * object they are about, and "now" (when the state was read).
 */
export interface ClusterIndex {
  state: KubernetesState;
  namespace: string;
  now: number;
  workloads: Map<string, Workload>;
  workloadOf(pod: Pod): Workload;
  /** The events about an object (`Pod`, `ReplicaSet`, `PersistentVolumeClaim`…) of that name, latest last. */
  eventsAbout(kind: string, name: string): KubernetesEvent[];
  /** The workload a ReplicaSet belongs to, by its owner or its name. */
  workloadOfReplicaSet(name: string): Workload | undefined;
}

export function indexState(state: KubernetesState, fallbackNow: Date): ClusterIndex {
  const now = state.readAt === undefined ? fallbackNow.getTime() : Date.parse(state.readAt);
  const workloads = new Map<string, Workload>();
  const add = (workload: Workload) => workloads.set(workload.ref, workload);
  for (const deployment of state.deployments ?? []) {
    add({
      ref: `deployment/${deployment.metadata.name}`,
      name: deployment.metadata.name,
      spec: deployment.spec.template.spec,
      labels: deployment.spec.template.metadata?.labels ?? deployment.spec.selector?.matchLabels ?? {},
      desired: deployment.spec.replicas ?? 1,
      ...(deployment.status === undefined ? {} : { ready: deployment.status.readyReplicas ?? 0 }),
      pods: [],
    });
  }
  for (const statefulSet of state.statefulSets ?? []) {
    add({
      ref: `statefulset/${statefulSet.metadata.name}`,
      name: statefulSet.metadata.name,
      spec: statefulSet.spec.template.spec,
      labels: statefulSet.spec.template.metadata?.labels ?? statefulSet.spec.selector?.matchLabels ?? {},
      desired: statefulSet.spec.replicas ?? 1,
      ...(statefulSet.status === undefined ? {} : { ready: statefulSet.status.readyReplicas ?? 0 }),
      pods: [],
    });
  }
  const replicaSetOwner = new Map<string, string>();
  for (const replicaSet of state.replicaSets ?? []) {
    const owner = replicaSet.metadata.ownerReferences?.find((reference) => reference.kind === "Deployment");
    if (owner !== undefined) replicaSetOwner.set(replicaSet.metadata.name, owner.name);
  }
  const workloadOfReplicaSet = (name: string): Workload | undefined => {
    const owner =
      replicaSetOwner.get(name) ??
      [...workloads.values()].find(
        (workload) =>
          workload.ref.startsWith("deployment/") && name.startsWith(`${workload.name}-`) && /^[a-z0-9]{5,10}$/.test(name.slice(workload.name.length + 1)),
      )?.name;
    return owner === undefined ? undefined : (workloads.get(`deployment/${owner}`) ?? adopt(`deployment/${owner}`, owner));
  };
  const adopt = (ref: string, name: string): Workload => {
    const workload: Workload = { ref, name, labels: {}, pods: [] };
    add(workload);
    return workload;
  };
  const workloadOf = (pod: Pod): Workload => {
    const owner = pod.metadata.ownerReferences?.[0];
    if (owner?.kind === "ReplicaSet") {
      const found = workloadOfReplicaSet(owner.name);
      if (found !== undefined) return found;
      const hash = pod.metadata.labels?.["pod-template-hash"];
      const name = hash !== undefined && owner.name.endsWith(`-${hash}`) ? owner.name.slice(0, -hash.length - 1) : owner.name;
      return workloads.get(`deployment/${name}`) ?? adopt(`deployment/${name}`, name);
    }
    if (owner !== undefined) {
      const ref = `${owner.kind.toLowerCase()}/${owner.name}`;
      return workloads.get(ref) ?? adopt(ref, owner.name);
    }
    const hash = pod.metadata.labels?.["pod-template-hash"];
    const cut = hash === undefined ? -1 : pod.metadata.name.indexOf(`-${hash}-`);
    if (cut > 0) {
      const name = pod.metadata.name.slice(0, cut);
      return workloads.get(`deployment/${name}`) ?? adopt(`deployment/${name}`, name);
    }
    return workloads.get(`pod/${pod.metadata.name}`) ?? adopt(`pod/${pod.metadata.name}`, pod.metadata.name);
  };
  for (const pod of state.pods ?? []) {
    if (pod.metadata.deletionTimestamp !== undefined) continue;
    const workload = workloadOf(pod);
    workload.pods.push(pod);
    if (workload.spec === undefined && pod.spec !== undefined) workload.spec = pod.spec;
    if (Object.keys(workload.labels).length === 0 && pod.metadata.labels !== undefined) workload.labels = withoutHash(pod.metadata.labels);
  }
  const events = new Map<string, KubernetesEvent[]>();
  for (const event of [...(state.events ?? [])].sort((a, b) => eventTime(a) - eventTime(b))) {
    const key = `${event.involvedObject.kind ?? ""}/${event.involvedObject.name ?? ""}`;
    events.set(key, [...(events.get(key) ?? []), event]);
  }
  return {
    state,
    namespace: state.namespace,
    now,
    workloads,
    workloadOf,
    eventsAbout: (kind, name) => events.get(`${kind}/${name}`) ?? [],
    workloadOfReplicaSet,
  };
}

function withoutHash(labels: Readonly<Record<string, string>>): Record<string, string> {
  const { "pod-template-hash": _hash, "controller-revision-hash": _revision, "statefulset.kubernetes.io/pod-name": _name, ...rest } = labels;
  return rest;
}

/** When an event last happened (epoch ms; 0 when undated). */
export function eventTime(event: KubernetesEvent): number {
  const at = event.lastTimestamp ?? event.series?.lastObservedTime ?? event.eventTime ?? event.firstTimestamp ?? event.metadata.creationTimestamp;
  return at === undefined || at === null ? 0 : Date.parse(at);
}

/** When an event first happened, if dated. */
export function eventOnset(event: KubernetesEvent): Date | undefined {
  const at = event.firstTimestamp ?? event.eventTime ?? event.lastTimestamp;
  return at === undefined || at === null ? undefined : new Date(at);
}

/** Whether every label of `selector` is on `labels`. */
export function selects(selector: Readonly<Record<string, string>>, labels: Readonly<Record<string, string>> | undefined): boolean {
  const entries = Object.entries(selector);
  return entries.length > 0 && entries.every(([key, value]) => labels?.[key] === value);
}

/** The containers of a pod spec, init containers first. */
export function containersOf(spec: PodSpec | undefined): Container[] {
  return spec === undefined ? [] : [...(spec.initContainers ?? []), ...spec.containers];
}

/** "app=cartservice, tier=web": labels as a selector reads. */
export function labelText(labels: Readonly<Record<string, string>>): string {
  return Object.entries(labels)
    .map(([key, value]) => `${key}=${value}`)
    .join(", ");
}

/** A few names, then how many more. */
export function someOf(names: readonly string[], most = 3): string[] {
  return names.length <= most ? [...names] : [...names.slice(0, most), `${names.length - most} more`];
}

export function isHealthy(pod: Pod): boolean {
  const phase = pod.status?.phase;
  if (phase === "Succeeded") return true;
  if (phase !== "Running") return false;
  const statuses = pod.status?.containerStatuses ?? [];
  return statuses.every((status) => status.ready !== false && status.state?.waiting === undefined);
}

/** A workload is short when it has fewer ready pods than it wants (or no ready pod at all, unread counts aside). */
export function isShort(workload: Workload): boolean {
  const ready = workload.ready ?? workload.pods.filter(isHealthy).length;
  return ready < (workload.desired ?? Math.max(1, workload.pods.length));
}
