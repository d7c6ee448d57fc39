import type { ContainerStatus, Deployment, KubernetesEvent, Pod, ReplicaSet, TimeWindow } from "@pes/contracts";
import type { EventEvidence, Evidence } from "./evidence.js";
import { eventReleases, shortImage } from "./kubernetes-releases.js";

/** At most this many events or pods are reported: the strongest first. */
const MAX_FINDINGS = 20;
const REVISION = "deployment.kubernetes.io/revision";

type Cited = { action: string; link?: string };

/** Whether an object is `name` or named after it (`checkout-7d9f…` for `checkout`): what `name` narrows to. */
function namedAfter(objectName: string | undefined, name: string | undefined): boolean {
  return name === undefined || objectName === name || (objectName?.startsWith(`${name}-`) ?? false);
}

function inWindow(at: Date, window: TimeWindow): boolean {
  return at >= window.start && at <= window.end;
}

function dateOf(text: string | null | undefined): Date | undefined {
  return text === undefined || text === null ? undefined : new Date(text);
}

/**
 * When an event began and when it last happened. A recurring event is one object whose count grows: core
 * events keep their first occurrence in firstTimestamp, events.k8s.io ones in eventTime (their series
 * holds the last); an event without either is known by its last occurrence alone.
 */
function eventSpan(event: KubernetesEvent): { began: Date; last: Date } | undefined {
  const last = dateOf(event.series?.lastObservedTime ?? event.lastTimestamp ?? event.eventTime ?? event.firstTimestamp ?? event.metadata.creationTimestamp);
  if (last === undefined) return undefined;
  const began = dateOf(event.firstTimestamp ?? event.eventTime) ?? last;
  return began > last ? { began: last, last } : { began, last };
}

/**
 * Events that happened in the window (a recurring one that began before it counts): warnings first, then
 * the releases the events tell (eventReleases: a deploy, as a change), then the other events, the latest
 * first. Each is dated when it began, so that what came first reads first: a crash loop that recurs until
 * the issue time still began after the OOM kill that set it off.
 */
export function eventFindings(events: readonly KubernetesEvent[], name: string | undefined, window: TimeWindow, cited: Cited): Evidence[] {
  const found = events.flatMap((event) => {
    const span = eventSpan(event);
    if (span === undefined || span.last < window.start || span.began > window.end || !namedAfter(event.involvedObject.name, name)) return [];
    return [{ event, ...span, warning: event.type === "Warning" }];
  });
  const releases = eventReleases(
    found.filter(({ warning }) => !warning),
    cited,
  );
  const listed = found.filter(({ event }) => !releases.used.has(event));
  listed.sort((a, b) => Number(b.warning) - Number(a.warning) || b.last.getTime() - a.last.getTime());
  const reported = listed.slice(0, MAX_FINDINGS).map(({ event, began, warning }): EventEvidence => {
    const count = event.series?.count ?? event.count ?? 1;
    const message = event.message === undefined ? undefined : `${event.message}${count > 1 ? ` (${count} times)` : ""}`;
    return {
      kind: "event",
      ...cited,
      subject: `${(event.involvedObject.kind ?? "object").toLowerCase()}/${event.involvedObject.name ?? event.metadata.name}`,
      reason: event.reason ?? "(no reason)",
      ...containerOf(event),
      ...(message === undefined ? {} : { message }),
      warning,
      onset: began,
    };
  });
  const warnings = reported.filter(({ warning }) => warning);
  return [...warnings, ...releases.changes, ...reported.slice(warnings.length)];
}

/** A container's field path (`spec.containers{checkout}`, `spec.initContainers{migrate}`). */
const CONTAINER_FIELD = /^spec\.(?:initContainers|containers|ephemeralContainers)\{([^}]+)\}$/;
/** The kubelet's words for a container it backs off restarting: "Back-off restarting failed container checkout in pod …". */
const FAILED_CONTAINER = /\bfailed container (\S+)/;

/** The pod's container an event is about: its field path says, else the kubelet's message names it. */
function containerOf(event: KubernetesEvent): { container?: string } {
  if (event.involvedObject.kind !== "Pod") return {};
  const container = CONTAINER_FIELD.exec(event.involvedObject.fieldPath ?? "")?.[1] ?? FAILED_CONTAINER.exec(event.message ?? "")?.[1];
  return container === undefined ? {} : { container };
}

/**
 * The rollouts of the Deployments: each ReplicaSet a Deployment owns that was created in the window (a
 * new revision: a new pod template, e.g. a new image), the latest first. A Deployment's first ReplicaSet
 * (revision 1, and no other listed) is its creation: nothing to roll back to, so no change.
 */
export function rolloutFindings(deployments: readonly Deployment[], replicaSets: readonly ReplicaSet[], window: TimeWindow, cited: Cited): Evidence[] {
  const found = deployments.flatMap((deployment) => {
    const owned = replicaSets.filter(
      (replicaSet) => replicaSet.metadata.ownerReferences?.some((owner) => owner.kind === "Deployment" && owner.uid === deployment.metadata.uid) ?? false,
    );
    return owned.flatMap((replicaSet) => {
      const created = replicaSet.metadata.creationTimestamp;
      if (created === undefined || !inWindow(new Date(created), window)) return [];
      if (revisionOf(replicaSet) <= 1 && owned.length === 1) return [];
      return [{ deployment: deployment.metadata.name, replicaSet, at: new Date(created) }];
    });
  });
  found.sort((a, b) => b.at.getTime() - a.at.getTime() || revisionOf(b.replicaSet) - revisionOf(a.replicaSet));
  return found.map(({ deployment, replicaSet, at }) => ({
    kind: "change",
    ...cited,
    change: "deploy",
    subject: deployment,
    detail: replicaSet.spec.template.spec.containers.map((container) => shortImage(container.image ?? container.name)).join(", "),
    at,
  }));
}

function revisionOf(replicaSet: ReplicaSet): number {
  return Number(replicaSet.metadata.annotations?.[REVISION] ?? 0);
}

/** The kubelet's restart back-off: 10 s, doubling after each restart, at most 5 min (its defaults). */
const BACK_OFF_FIRST_MS = 10_000;
const BACK_OFF_MAX_MS = 300_000;

/**
 * The least time `restarts` restarts of a container take under the kubelet's back-off: how long before
 * its last termination it must already have been failing (71 restarts: at least 5 h 30 min).
 */
export function leastRestartSpanMs(restarts: number): number {
  let span = 0;
  for (let restart = 1; restart < restarts; restart++) span += Math.min(BACK_OFF_FIRST_MS * 2 ** (restart - 1), BACK_OFF_MAX_MS);
  return span;
}

/**
 * Pods that restarted in the window: for each, its container whose last termination is the latest,
 * named by why (OOMKilled, CrashLoopBackOff, Error, or how many restarts), the latest first. Dated at that
 * termination, unless its restarts are too many to fit in the window: then at the earliest they can have
 * begun, so that a pod crash-looping for hours reads as what it is, older than the incident.
 */
export function podFindings(pods: readonly Pod[], name: string | undefined, window: TimeWindow, cited: Cited): Evidence[] {
  const found = pods.flatMap((pod) => {
    if (!namedAfter(pod.metadata.name, name)) return [];
    const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
    const restarted = statuses.flatMap((status) => {
      const finished = status.lastState?.terminated?.finishedAt;
      if (status.restartCount === 0 || finished === undefined || finished === null || !inWindow(new Date(finished), window)) return [];
      return [{ status, at: new Date(finished) }];
    });
    const latest = restarted.sort((a, b) => b.at.getTime() - a.at.getTime())[0];
    return latest === undefined ? [] : [{ pod: pod.metadata.name, ...latest }];
  });
  found.sort((a, b) => b.at.getTime() - a.at.getTime());
  const restarted = found.map(({ pod, status, at }): EventEvidence => {
    const began = new Date(at.getTime() - leastRestartSpanMs(status.restartCount));
    return {
      kind: "event",
      ...cited,
      subject: `pod/${pod}`,
      reason: restartReason(status),
      container: status.name,
      message: restartMessage(status),
      warning: true,
      onset: began < window.start ? began : at,
    };
  });
  const waiting = pods.flatMap((pod) => (namedAfter(pod.metadata.name, name) ? notStarted(pod, cited) : []));
  return [...restarted, ...waiting].slice(0, MAX_FINDINGS);
}

/** Waiting reasons that are a container's way to start, not a fault. */
const STARTING = new Set(["ContainerCreating", "PodInitializing"]);

/**
 * A pod that never started: not scheduled (its PodScheduled condition false, the scheduler's message
 * quoted), or a container that never ran, waiting for a reason that is a fault (ErrImagePull,
 * CreateContainerConfigError…, quoted with its message). Dated when the pod started (or was created),
 * the latest the fault can have begun; undated when the status says neither.
 */
function notStarted(pod: Pod, cited: Cited): EventEvidence[] {
  const since = dateOf(pod.status?.startTime ?? pod.metadata.creationTimestamp);
  const base = { kind: "event" as const, ...cited, subject: `pod/${pod.metadata.name}`, warning: true };
  const scheduled = pod.status?.conditions?.find((condition) => condition.type === "PodScheduled");
  if (scheduled?.status === "False") {
    const onset = dateOf(scheduled.lastTransitionTime) ?? since;
    return [
      {
        ...base,
        reason: scheduled.reason ?? "Unschedulable",
        message: scheduled.message ?? "not scheduled on any node",
        ...(onset === undefined ? {} : { onset }),
      },
    ];
  }
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  return statuses.flatMap((status) => {
    const reason = status.state?.waiting?.reason;
    if (status.restartCount > 0 || reason === undefined || STARTING.has(reason)) return [];
    const why = status.state?.waiting?.message;
    const message = `container ${status.name} not started: ${reason}${why === undefined ? "" : `: ${why}`}`;
    return [{ ...base, reason, container: status.name, message, ...(since === undefined ? {} : { onset: since }) }];
  });
}

/** The most telling reason: killed for memory, then crash-looping, then a failing exit, else the count. */
function restartReason(status: ContainerStatus): string {
  const terminated = status.lastState?.terminated?.reason;
  if (terminated === "OOMKilled") return "OOMKilled";
  // Its process never ran (its command not in the image): that, not the crash loop it set off, is why.
  if (terminated === "StartError") return "StartError";
  if (status.state?.waiting?.reason === "CrashLoopBackOff") return "CrashLoopBackOff";
  if (terminated === "Error") return "Error";
  return `restarted ${status.restartCount} ${status.restartCount === 1 ? "time" : "times"}`;
}

function restartMessage(status: ContainerStatus): string {
  const exitCode = status.lastState?.terminated?.exitCode;
  const times = status.restartCount === 1 ? "once" : `${status.restartCount} times`;
  const why = status.lastState?.terminated?.message;
  return `container ${status.name} restarted ${times}${exitCode === undefined ? "" : `, last exit code ${exitCode}`}${why === undefined ? "" : `: ${why}`}`;
}
