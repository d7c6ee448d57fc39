import { Deployment, type KubernetesEvent, PersistentVolume, PersistentVolumeClaim, type ReplicaSet, Service, StatefulSet } from "@pes/contracts";
import { parseAllDocuments } from "yaml";
import type { z } from "zod";
import { describedEvents } from "./events-text.js";
import { ageMs, before, describeDate, describeFields, field, keyValues, listValues, parseTable, value } from "./kubectl-text.js";
import { parsePodSpecFields } from "./pod-spec-text.js";

/** The objects of an app's manifests (GetAppYAML), each parsed by its contract schema. */
export interface Manifests {
  deployments: Deployment[];
  statefulSets: StatefulSet[];
  services: Service[];
  persistentVolumeClaims: PersistentVolumeClaim[];
  persistentVolumes: PersistentVolume[];
  /** What could not be read, in plain words (a document that is not YAML, an object its schema refuses). */
  notes: string[];
}

/** Maps whose values the API gives as strings even when a manifest writes a number (`cpu: 1`, `version: 2`). */
const STRING_MAPS = new Set(["requests", "limits", "labels", "matchLabels", "nodeSelector", "annotations", "capacity", "hard", "used"]);
/** Scalars the API gives as strings: an env var's or a toleration's `value`, a selector's `values`, a command. */
const STRING_SCALARS = new Set(["value", "values", "command", "args"]);

function isRecord(node: unknown): node is Record<string, unknown> {
  return typeof node === "object" && node !== null && !Array.isArray(node);
}

/** A manifest's object as the API server would return it: quantities, labels and env values as strings. */
export function asApiObject(node: unknown, key?: string): unknown {
  if (Array.isArray(node)) return node.map((item) => asApiObject(item, key === undefined || !STRING_SCALARS.has(key) ? undefined : key));
  if (isRecord(node)) {
    if (key !== undefined && STRING_MAPS.has(key)) {
      return Object.fromEntries(Object.entries(node).map(([name, item]) => [name, item === null ? "" : String(item)]));
    }
    return Object.fromEntries(Object.entries(node).map(([name, item]) => [name, asApiObject(item, name)]));
  }
  if (key !== undefined && STRING_SCALARS.has(key) && (typeof node === "number" || typeof node === "boolean")) return String(node);
  return node;
}

function parseAs<T extends z.ZodType>(schema: T, object: unknown, what: string, notes: string[]): z.output<T> | undefined {
  const parsed = schema.safeParse(object);
  if (parsed.success) return parsed.data;
  notes.push(`${what}: ${parsed.error.issues.map((issue) => `${issue.path.join(".")} ${issue.message}`).join("; ")}`);
  return undefined;
}

/** Reads the manifests of an app (several YAML documents) into the objects the contract knows. */
export function parseManifests(text: string, namespace: string): Manifests {
  const manifests: Manifests = { deployments: [], statefulSets: [], services: [], persistentVolumeClaims: [], persistentVolumes: [], notes: [] };
  let documents: ReturnType<typeof parseAllDocuments>;
  try {
    documents = parseAllDocuments(text);
  } catch (error) {
    manifests.notes.push(`manifest: ${error instanceof Error ? error.message : String(error)}`);
    return manifests;
  }
  for (const document of Array.isArray(documents) ? documents : [documents]) {
    if (document.errors.length > 0) {
      manifests.notes.push(`manifest: ${document.errors[0]?.message ?? "unreadable"}`);
      continue;
    }
    const object = asApiObject(document.toJS());
    if (!isRecord(object) || !isRecord(object.metadata)) continue;
    const name = typeof object.metadata.name === "string" ? object.metadata.name : "?";
    const namespaced = { ...object, metadata: { namespace, ...object.metadata } };
    switch (object.kind) {
      case "Deployment": {
        const deployment = parseAs(Deployment, namespaced, `Deployment ${name}`, manifests.notes);
        if (deployment !== undefined) manifests.deployments.push(deployment);
        break;
      }
      case "StatefulSet": {
        const statefulSet = parseAs(StatefulSet, namespaced, `StatefulSet ${name}`, manifests.notes);
        if (statefulSet !== undefined) manifests.statefulSets.push(statefulSet);
        break;
      }
      case "Service": {
        const service = parseAs(Service, namespaced, `Service ${name}`, manifests.notes);
        if (service !== undefined) manifests.services.push(service);
        break;
      }
      case "PersistentVolumeClaim": {
        const claim = parseAs(PersistentVolumeClaim, namespaced, `PersistentVolumeClaim ${name}`, manifests.notes);
        if (claim !== undefined) manifests.persistentVolumeClaims.push(claim);
        break;
      }
      case "PersistentVolume": {
        const volume = parseAs(PersistentVolume, object, `PersistentVolume ${name}`, manifests.notes);
        if (volume !== undefined) manifests.persistentVolumes.push(volume);
        break;
      }
      default:
        break;
    }
  }
  return manifests;
}

type WorkloadStatus = NonNullable<Deployment["status"]>;

/** `kubectl get deployments` (NAME READY UP-TO-DATE AVAILABLE AGE) rows: name → status and age. */
export function deploymentRows(text: string, now: Date): Map<string, { status: WorkloadStatus; replicas?: number; created?: string }> {
  const rows = new Map<string, { status: WorkloadStatus; replicas?: number; created?: string }>();
  for (const row of parseTable(text, /^NAME\s+READY/)) {
    const name = row.NAME;
    if (name === undefined || name === "") continue;
    const [ready, desired] = (row.READY ?? "").split("/").map(Number);
    const updated = Number(row["UP-TO-DATE"]);
    const available = Number(row.AVAILABLE);
    const age = ageMs(row.AGE ?? "");
    rows.set(name, {
      status: {
        ...(Number.isFinite(desired) ? { replicas: desired } : {}),
        ...(Number.isFinite(ready) ? { readyReplicas: ready } : {}),
        ...(Number.isFinite(updated) ? { updatedReplicas: updated } : {}),
        ...(Number.isFinite(available) ? { availableReplicas: available } : {}),
      },
      ...(Number.isFinite(desired) ? { replicas: desired } : {}),
      ...(age === undefined ? {} : { created: before(now, age) }),
    });
  }
  return rows;
}

/** What `kubectl describe deployments <name>` adds to a manifest: its status, conditions, newest ReplicaSet and events. */
export interface DeploymentDescribe {
  name: string;
  status: WorkloadStatus;
  /** The ReplicaSet of the current template (`NewReplicaSet:`), whose pods run the manifest's spec. */
  newReplicaSet?: string;
  /** The deployment read from describe alone, for one without a manifest. */
  deployment: Deployment;
  events: KubernetesEvent[];
}

export function parseDeploymentDescribe(text: string, now: Date): DeploymentDescribe | undefined {
  const fields = describeFields(text);
  const name = value(fields, "Name");
  if (name === undefined) return undefined;
  const namespace = value(fields, "Namespace");
  const counts = Object.fromEntries(
    [...(value(fields, "Replicas") ?? "").matchAll(/(\d+) (desired|updated|total|available|unavailable)/g)].map((match) => [match[2], Number(match[1])]),
  );
  const conditions = parseTable(field(fields, "Conditions")?.lines ?? [], /^\s*Type\s+Status/).flatMap((row) =>
    row.Type === undefined || row.Type === "" ? [] : [{ type: row.Type, status: row.Status ?? "Unknown", ...(row.Reason ? { reason: row.Reason } : {}) }],
  );
  const status: WorkloadStatus = {
    ...(counts.total === undefined ? {} : { replicas: counts.total }),
    ...(counts.updated === undefined ? {} : { updatedReplicas: counts.updated }),
    ...(counts.available === undefined ? {} : { availableReplicas: counts.available }),
    ...(counts.unavailable === undefined ? {} : { unavailableReplicas: counts.unavailable }),
    ...(conditions.length === 0 ? {} : { conditions }),
  };
  const newReplicaSet = /^(\S+)/.exec(value(fields, "NewReplicaSet") ?? "")?.[1];
  const template = describeFields(field(fields, "Pod Template")?.lines ?? []);
  const labels = keyValues(listValues(field(fields, "Labels")));
  const created = describeDate(value(fields, "CreationTimestamp") ?? "");
  const deployment: Deployment = {
    metadata: {
      name,
      ...(namespace === undefined ? {} : { namespace }),
      ...(Object.keys(labels).length === 0 ? {} : { labels }),
      ...(created === undefined ? {} : { creationTimestamp: created }),
    },
    spec: {
      ...(counts.desired === undefined ? {} : { replicas: counts.desired }),
      selector: { matchLabels: keyValues(listValues(field(fields, "Selector"))) },
      template: { metadata: { labels: keyValues(listValues(field(template, "Labels"))) }, spec: parsePodSpecFields(template).spec },
    },
    status,
  };
  return {
    name,
    status,
    ...(newReplicaSet === undefined || newReplicaSet === "<none>" ? {} : { newReplicaSet }),
    deployment,
    events: describedEvents(field(fields, "Events"), { kind: "Deployment", name, ...(namespace === undefined ? {} : { namespace }) }, now),
  };
}

/** `kubectl describe replicasets <name>`: the ReplicaSet (owner, template, counts) and its events (FailedCreate). */
export function parseReplicaSetDescribe(text: string, now: Date): { replicaSet: ReplicaSet; events: KubernetesEvent[] } | undefined {
  const fields = describeFields(text);
  const name = value(fields, "Name");
  if (name === undefined) return undefined;
  const namespace = value(fields, "Namespace");
  const owner = /^(\w+)\/(\S+)$/.exec(value(fields, "Controlled By") ?? "");
  const replicas = /(\d+) current \/ (\d+) desired/.exec(value(fields, "Replicas") ?? "");
  const running = /(\d+) Running/.exec(value(fields, "Pods Status") ?? "");
  const template = describeFields(field(fields, "Pod Template")?.lines ?? []);
  const labels = keyValues(listValues(field(fields, "Labels")));
  const annotations = keyValues(listValues(field(fields, "Annotations")), ": ");
  const replicaSet: ReplicaSet = {
    metadata: {
      name,
      ...(namespace === undefined ? {} : { namespace }),
      ...(Object.keys(labels).length === 0 ? {} : { labels }),
      ...(Object.keys(annotations).length === 0 ? {} : { annotations }),
      ...(owner === null ? {} : { ownerReferences: [{ kind: owner[1] ?? "", name: owner[2] ?? "" }] }),
    },
    spec: {
      ...(replicas === null ? {} : { replicas: Number(replicas[2]) }),
      template: { metadata: { labels: keyValues(listValues(field(template, "Labels"))) }, spec: parsePodSpecFields(template).spec },
    },
    status: {
      ...(replicas === null ? {} : { replicas: Number(replicas[1]) }),
      ...(running === null ? {} : { readyReplicas: Number(running[1]) }),
    },
  };
  return { replicaSet, events: describedEvents(field(fields, "Events"), { kind: "ReplicaSet", name, ...(namespace === undefined ? {} : { namespace }) }, now) };
}

/** `kubectl get replicasets` (NAME DESIRED CURRENT READY AGE) rows, for the creation times describe does not print. */
export function replicaSetAges(text: string, now: Date): Map<string, string> {
  const ages = new Map<string, string>();
  for (const row of parseTable(text, /^NAME\s+DESIRED/)) {
    const age = ageMs(row.AGE ?? "");
    if (row.NAME !== undefined && age !== undefined) ages.set(row.NAME, before(now, age));
  }
  return ages;
}

/** `kubectl describe statefulsets <name>`: replicas, pods' status, template and events. */
export function parseStatefulSetDescribe(text: string, now: Date): { statefulSet: StatefulSet; events: KubernetesEvent[] } | undefined {
  const fields = describeFields(text);
  const name = value(fields, "Name");
  if (name === undefined) return undefined;
  const namespace = value(fields, "Namespace");
  const counts = Object.fromEntries([...(value(fields, "Replicas") ?? "").matchAll(/(\d+) (desired|total)/g)].map((match) => [match[2], Number(match[1])]));
  const running = /(\d+) Running/.exec(value(fields, "Pods Status") ?? "");
  const template = describeFields(field(fields, "Pod Template")?.lines ?? []);
  const labels = keyValues(listValues(field(fields, "Labels")));
  const created = describeDate(value(fields, "CreationTimestamp") ?? "");
  const statefulSet: StatefulSet = {
    metadata: {
      name,
      ...(namespace === undefined ? {} : { namespace }),
      ...(Object.keys(labels).length === 0 ? {} : { labels }),
      ...(created === undefined ? {} : { creationTimestamp: created }),
    },
    spec: {
      ...(counts.desired === undefined ? {} : { replicas: counts.desired }),
      selector: { matchLabels: keyValues(listValues(field(fields, "Selector"))) },
      template: { metadata: { labels: keyValues(listValues(field(template, "Labels"))) }, spec: parsePodSpecFields(template).spec },
    },
    status: {
      ...(counts.total === undefined ? {} : { replicas: counts.total }),
      ...(running === null ? {} : { readyReplicas: Number(running[1]) }),
    },
  };
  return {
    statefulSet,
    events: describedEvents(field(fields, "Events"), { kind: "StatefulSet", name, ...(namespace === undefined ? {} : { namespace }) }, now),
  };
}

/** `kubectl get statefulsets` (NAME READY AGE) rows: name → ready and desired replicas. */
export function statefulSetRows(text: string): Map<string, { readyReplicas: number; replicas: number }> {
  const rows = new Map<string, { readyReplicas: number; replicas: number }>();
  for (const row of parseTable(text, /^NAME\s+READY/)) {
    const [ready, desired] = (row.READY ?? "").split("/").map(Number);
    if (row.NAME !== undefined && row.NAME !== "" && Number.isFinite(ready) && Number.isFinite(desired))
      rows.set(row.NAME, { readyReplicas: ready ?? 0, replicas: desired ?? 0 });
  }
  return rows;
}
