import type { KubernetesEvent, Pod } from "@pes/contracts";
import { describedEvents } from "./events-text.js";
import { ageMs, before, describeDate, describeFields, field, isNone, keyValues, listValues, parseTable, value } from "./kubectl-text.js";
import { parsePodSpecFields } from "./pod-spec-text.js";

/** `kubectl describe pods <name>`: the pod (spec, status, conditions) and its Events section. */
export function parsePodDescribe(text: string, now: Date): { pod: Pod; events: KubernetesEvent[] } | undefined {
  const fields = describeFields(text);
  const name = value(fields, "Name");
  if (name === undefined) return undefined;
  const namespace = value(fields, "Namespace");
  const labels = keyValues(listValues(field(fields, "Labels")));
  const annotations = keyValues(listValues(field(fields, "Annotations")), ": ");
  const owner = /^(\w+)\/(\S+)$/.exec(value(fields, "Controlled By") ?? "");
  const node = value(fields, "Node");
  const [nodeName, hostIP] = node === undefined ? [] : node.split("/");
  const { spec, statuses, initStatuses } = parsePodSpecFields(fields);
  const conditions = parseTable(field(fields, "Conditions")?.lines ?? [], /^\s*Type\s+Status/).flatMap((row) =>
    row.Type === undefined || row.Type === "" ? [] : [{ type: row.Type, status: row.Status ?? "Unknown", ...(row.Reason ? { reason: row.Reason } : {}) }],
  );
  const startTime = describeDate(value(fields, "Start Time") ?? "");
  const ip = value(fields, "IP");
  const reason = value(fields, "Reason");
  const message = value(fields, "Message");
  const pod: Pod = {
    metadata: {
      name,
      ...(namespace === undefined ? {} : { namespace }),
      ...(Object.keys(labels).length === 0 ? {} : { labels }),
      ...(Object.keys(annotations).length === 0 ? {} : { annotations }),
      ...(owner === null ? {} : { ownerReferences: [{ kind: owner[1] ?? "", name: owner[2] ?? "" }] }),
    },
    spec: { ...spec, ...(nodeName === undefined || isNone(nodeName) ? {} : { nodeName }) },
    status: {
      ...optionalText("phase", value(fields, "Status")),
      ...optionalText("reason", reason),
      ...optionalText("message", message),
      ...(conditions.length === 0 ? {} : { conditions }),
      ...optionalText("hostIP", hostIP),
      ...optionalText("podIP", ip),
      ...optionalText("startTime", startTime),
      ...(statuses.length === 0 ? {} : { containerStatuses: statuses }),
      ...(initStatuses.length === 0 ? {} : { initContainerStatuses: initStatuses }),
    },
  };
  const events = describedEvents(field(fields, "Events"), { kind: "Pod", name, ...(namespace === undefined ? {} : { namespace }) }, now);
  return { pod, events };
}

function optionalText<K extends string>(key: K, text: string | undefined): Partial<Record<K, string>> {
  return text === undefined || isNone(text) ? {} : ({ [key]: text } as Partial<Record<K, string>>);
}

/**
 * A row of `kubectl get pods [-o wide]` (NAME READY STATUS RESTARTS AGE IP NODE) as a pod: for pods no
 * describe was taken of (kube-system's), and for the status column, which tells more than the phase
 * (`CrashLoopBackOff`, `ImagePullBackOff`, `OOMKilled`, `Evicted`).
 */
export function podsOfTable(text: string, namespace: string, now: Date): Pod[] {
  return parseTable(text, /^NAME\s+READY\s+STATUS/).flatMap((row): Pod[] => {
    const name = row.NAME;
    if (name === undefined || name === "") return [];
    const [ready, total] = (row.READY ?? "").split("/").map(Number);
    const status = row.STATUS ?? "";
    const restarts = Number.parseInt(row.RESTARTS ?? "0", 10);
    const age = ageMs(row.AGE ?? "");
    const node = row.NODE;
    const ip = row.IP;
    const phase = PHASES.has(status)
      ? status
      : status === "Completed"
        ? "Succeeded"
        : /^(ContainerCreating|PodInitializing|Init:)/.test(status)
          ? "Pending"
          : "Running";
    const containers = Array.from({ length: Number.isFinite(total) ? (total ?? 0) : 0 }, (_, index) => ({ name: `container-${index}` }));
    // The STATUS column shows a container's waiting or terminated reason when there is one.
    const waiting = PHASES.has(status) || status === "Completed" ? undefined : { waiting: { reason: status } };
    return [
      {
        metadata: { name, namespace, ...(age === undefined ? {} : { creationTimestamp: before(now, age) }) },
        spec: { containers, ...(node === undefined || isNone(node) ? {} : { nodeName: node }) },
        status: {
          phase,
          ...(ip === undefined || isNone(ip) ? {} : { podIP: ip }),
          containerStatuses: containers.map(({ name: container }, index) => ({
            name: container,
            restartCount: index === 0 && Number.isFinite(restarts) ? restarts : 0,
            ready: index < (ready ?? 0),
            ...(waiting === undefined || index < (ready ?? 0) ? {} : { state: waiting }),
          })),
        },
      },
    ];
  });
}

const PHASES = new Set(["Pending", "Running", "Succeeded", "Failed", "Unknown"]);

/** Fills what a pod's describe lacks from its `get pods` row: its age. */
export function withListedStatus(pod: Pod, listed: Pod | undefined): Pod {
  const created = listed?.metadata.creationTimestamp;
  return created === undefined ? pod : { ...pod, metadata: { ...pod.metadata, creationTimestamp: created } };
}
