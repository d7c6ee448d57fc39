import {
  type Container,
  ContainerLog,
  Deployment,
  EndpointSlice,
  KubernetesEvent,
  type KubernetesStateObservation,
  Node,
  PersistentVolume,
  PersistentVolumeClaim,
  Pod,
  type PodSpec,
  ReplicaSet,
  ResourceQuota,
  Service,
  StatefulSet,
  StorageClass,
} from "@pes/contracts";
import type { z } from "zod";
import type { CaseFiles } from "./case-files.js";
import { listedEvents, mergeEvents } from "./events-text.js";
import { nodeServicePod } from "./node-services-text.js";
import { lagOfListedPods, lagOfScheduledEvents, shiftEvents, shiftTime } from "./read-lag.js";
import { nodesOfTable, parseNodeDescribe } from "./nodes-text.js";
import { parsePodDescribe, podsOfTable, withListedStatus } from "./pods-text.js";
import { parseQuotaDescribe, quotasOfTable } from "./quotas-text.js";
import { parseEndpointsDescribe, parseServiceDescribe, sliceOfDescribedService } from "./services-text.js";
import { mergeClaim, namesOfTable, parseClaimDescribe, parseStorageClassDescribe, parseVolumeDescribe, storageClassesOfTable } from "./volumes-text.js";
import {
  type DeploymentDescribe,
  deploymentRows,
  parseDeploymentDescribe,
  parseManifests,
  parseReplicaSetDescribe,
  parseStatefulSetDescribe,
  replicaSetAges,
  statefulSetRows,
} from "./workloads-text.js";

/** The most log lines kept per service: the analysis reads the latest. */
const MAX_LOG_LINES = 1000;

/** Where a case's state is read from and against: its namespace, the collection time, the zone of its local times. */
export interface StateContext {
  namespace: string;
  collectedAt: Date;
  zone: string;
}

/**
 * The namespace's state as the API server held it at the collection, read from a case's kubectl texts
 * and manifests: what a `kubernetes-state` action of the Kubernetes connector would have observed.
 * `notes` says what could not be read (an object its schema refused is left out, not the whole state).
 */
export function clusterState(files: CaseFiles, context: StateContext): { observation: KubernetesStateObservation; notes: string[] } {
  const { namespace, collectedAt: now, zone } = context;
  const notes: string[] = [];
  const describeTexts = (type: string) => [...(files.describe.get(type)?.values() ?? [])];
  const list = (type: string, ns = namespace) => files.lists.get(`${type} ${ns} wide`) ?? files.lists.get(`${type} ${ns}`);
  const inNamespace = (object: { metadata: { namespace?: string | undefined } }) =>
    object.metadata.namespace === undefined || object.metadata.namespace === namespace;
  // Events read from describe outputs, and those of the listings, each set moved back by its lag (read-lag.ts).
  const describedEvents: KubernetesEvent[] = [];
  const events: KubernetesEvent[] = [];

  // Manifests: the spec of each app as applied, fault included.
  const manifests = [...files.appYamls.values()].map((text) => parseManifests(text, namespace));
  for (const manifest of manifests) notes.push(...manifest.notes);

  // Pods: describe for spec and status; the `get pods` table for their ages and for pods not described.
  const listedPods = new Map(podsOfTable(list("pods") ?? "", namespace, now).map((pod) => [pod.metadata.name, pod]));
  const pods = new Map<string, Pod>();
  for (const text of describeTexts("pods")) {
    const parsed = parsePodDescribe(text, now);
    if (parsed === undefined || !inNamespace(parsed.pod)) continue;
    pods.set(parsed.pod.metadata.name, parsed.pod);
    describedEvents.push(...parsed.events);
  }
  const describeLag = lagOfScheduledEvents(describedEvents, pods);
  const tableLag = lagOfListedPods(listedPods, pods);
  for (const [name, listed] of listedPods) {
    const created = shiftTime(listed.metadata.creationTimestamp, tableLag);
    const pod = pods.get(name);
    const dated = created === undefined ? listed : { ...listed, metadata: { ...listed.metadata, creationTimestamp: created } };
    pods.set(name, pod === undefined ? dated : withListedStatus(pod, dated));
  }

  // Deployments: the manifest's spec, the table's and describe's status.
  const rows = deploymentRows(list("deployments") ?? "", now);
  const described = new Map<string, DeploymentDescribe>();
  for (const text of describeTexts("deployments")) {
    const parsed = parseDeploymentDescribe(text, now);
    if (parsed === undefined || !inNamespace(parsed.deployment)) continue;
    described.set(parsed.name, parsed);
    describedEvents.push(...parsed.events);
  }
  const manifestDeployments = new Map(manifests.flatMap((manifest) => manifest.deployments).map((deployment) => [deployment.metadata.name, deployment]));
  const deployments: Deployment[] = [];
  // A manifest's object the API does not list was refused (a quota, an admission check): it is not in the state.
  const deploymentsListed = listedNames(list("deployments"));
  const manifestNames = [...manifestDeployments.keys()].filter((name) => deploymentsListed?.has(name) ?? true);
  for (const name of new Set([...manifestNames, ...described.keys(), ...rows.keys()])) {
    const manifest = manifestDeployments.get(name);
    const describe = described.get(name);
    const row = rows.get(name);
    const base: Deployment = manifest ?? describe?.deployment ?? { metadata: { name, namespace }, spec: { template: { spec: { containers: [] } } } };
    const created = describe?.deployment.metadata.creationTimestamp ?? shiftTime(row?.created, tableLag);
    deployments.push({
      ...base,
      metadata: { ...base.metadata, ...(created === undefined ? {} : { creationTimestamp: created }) },
      spec: { ...base.spec, ...(base.spec.replicas === undefined && row?.replicas !== undefined ? { replicas: row.replicas } : {}) },
      status: { ...row?.status, ...describe?.status, ...(row?.status.readyReplicas === undefined ? {} : { readyReplicas: row.status.readyReplicas }) },
    });
  }

  // ReplicaSets, with the ages only the table prints.
  const ages = replicaSetAges(list("replicasets") ?? "", now);
  const replicaSets: ReplicaSet[] = [];
  for (const text of describeTexts("replicasets")) {
    const parsed = parseReplicaSetDescribe(text, now);
    if (parsed === undefined || !inNamespace(parsed.replicaSet)) continue;
    const created = shiftTime(ages.get(parsed.replicaSet.metadata.name), tableLag);
    replicaSets.push(
      created === undefined ? parsed.replicaSet : { ...parsed.replicaSet, metadata: { ...parsed.replicaSet.metadata, creationTimestamp: created } },
    );
    describedEvents.push(...parsed.events);
  }

  // StatefulSets: the manifest's spec, or describe's; the table's and describe's status.
  const statefulSetsListed = listedNames(list("statefulsets"));
  const statefulSetTable = statefulSetRows(list("statefulsets") ?? "");
  const statefulSets = new Map<string, StatefulSet>();
  for (const statefulSet of manifests.flatMap((manifest) => manifest.statefulSets)) {
    if (statefulSetsListed?.has(statefulSet.metadata.name) ?? true) statefulSets.set(statefulSet.metadata.name, statefulSet);
  }
  for (const text of describeTexts("statefulsets")) {
    const parsed = parseStatefulSetDescribe(text, now);
    if (parsed === undefined || !inNamespace(parsed.statefulSet)) continue;
    const manifest = statefulSets.get(parsed.statefulSet.metadata.name);
    statefulSets.set(parsed.statefulSet.metadata.name, manifest === undefined ? parsed.statefulSet : { ...manifest, status: parsed.statefulSet.status });
    describedEvents.push(...parsed.events);
  }
  for (const [name, row] of statefulSetTable) {
    const statefulSet = statefulSets.get(name);
    if (statefulSet !== undefined) statefulSets.set(name, { ...statefulSet, status: { ...statefulSet.status, ...row } });
  }

  const enrichedPods = [...pods.values()].map((pod) => withTemplate(pod, deployments, replicaSets, described, [...statefulSets.values()]));

  // Services and their endpoints.
  const services = new Map<string, Service>();
  const slices = new Map<string, EndpointSlice>();
  const describedServices = [];
  for (const text of describeTexts("services")) {
    const parsed = parseServiceDescribe(text, now);
    if (parsed === undefined || !inNamespace(parsed.service)) continue;
    services.set(parsed.service.metadata.name, parsed.service);
    describedServices.push(parsed);
    describedEvents.push(...parsed.events);
  }
  const servicesListed = listedNames(list("services"));
  for (const service of manifests.flatMap((manifest) => manifest.services)) {
    if (!services.has(service.metadata.name) && (servicesListed?.has(service.metadata.name) ?? true)) services.set(service.metadata.name, service);
  }
  for (const text of describeTexts("endpoints")) {
    const slice = parseEndpointsDescribe(text, enrichedPods);
    if (slice !== undefined && inNamespace(slice)) slices.set(slice.metadata.name, slice);
  }
  for (const parsed of describedServices) {
    if (!slices.has(parsed.service.metadata.name)) slices.set(parsed.service.metadata.name, sliceOfDescribedService(parsed, enrichedPods));
  }

  // Nodes.
  const nodes = new Map<string, Node>();
  for (const text of describeTexts("nodes")) {
    const parsed = parseNodeDescribe(text, now);
    if (parsed === undefined) continue;
    nodes.set(parsed.node.metadata.name, parsed.node);
    describedEvents.push(...parsed.events);
  }
  for (const node of nodesOfTable(list("nodes") ?? "")) if (!nodes.has(node.metadata.name)) nodes.set(node.metadata.name, node);

  // Quotas.
  const quotas = new Map<string, z.output<typeof ResourceQuota>>();
  for (const text of describeTexts("resourcequotas")) {
    const quota = parseQuotaDescribe(text);
    if (quota !== undefined && inNamespace(quota)) quotas.set(quota.metadata.name, quota);
  }
  for (const quota of quotasOfTable(list("resourcequotas") ?? "", namespace)) if (!quotas.has(quota.metadata.name)) quotas.set(quota.metadata.name, quota);

  // Claims (the manifest's spec, describe's binding), volumes, classes.
  const manifestClaims = new Map(manifests.flatMap((manifest) => manifest.persistentVolumeClaims).map((claim) => [claim.metadata.name, claim]));
  const claims = new Map<string, PersistentVolumeClaim>();
  for (const text of describeTexts("persistentvolumeclaims")) {
    const parsed = parseClaimDescribe(text, now);
    if (parsed === undefined || !inNamespace(parsed.claim)) continue;
    const merged = mergeClaim(parsed.claim, manifestClaims.get(parsed.claim.metadata.name));
    if (merged !== undefined) claims.set(parsed.claim.metadata.name, merged);
    describedEvents.push(...parsed.events);
  }
  const claimsListed = listedNames(list("persistentvolumeclaims"));
  for (const [name, claim] of manifestClaims) if (!claims.has(name) && (claimsListed?.has(name) ?? true)) claims.set(name, claim);
  const volumes = new Map<string, PersistentVolume>();
  for (const text of describeTexts("persistentvolumes")) {
    const parsed = parseVolumeDescribe(text, now);
    if (parsed === undefined) continue;
    volumes.set(parsed.volume.metadata.name, parsed.volume);
    describedEvents.push(...parsed.events);
  }
  const storageClasses = new Map<string, StorageClass>();
  for (const text of describeTexts("storageclasses")) {
    const storageClass = parseStorageClassDescribe(text);
    if (storageClass !== undefined) storageClasses.set(storageClass.metadata.name, storageClass);
  }
  for (const storageClass of storageClassesOfTable(list("storageclasses") ?? "")) {
    if (!storageClasses.has(storageClass.metadata.name)) storageClasses.set(storageClass.metadata.name, storageClass);
  }

  // Events of every namespace listed (a node's are in `default`), with those of the describes.
  events.push(...shiftEvents(describedEvents, describeLag));
  for (const { namespace: eventNamespace, text } of files.eventLists) {
    const listed = listedEvents(text, eventNamespace, now);
    events.push(...shiftEvents(listed, lagOfScheduledEvents(listed, pods)));
  }
  const mergedEvents = mergeEvents(events);

  // kube-system: its pods as listed, and the node services as the pods that stand for them.
  const systemPods: Pod[] = podsOfTable(list("pods", "kube-system") ?? "", "kube-system", now);
  const containerLogs: ContainerLog[] = [];
  for (const { node, service, text } of files.nodeServices) {
    const { pod, log } = nodeServicePod(node, service, text, zone);
    systemPods.push(pod);
    if (log !== undefined) containerLogs.push(log);
  }

  // Each service's log lines, as its pod's container's.
  for (const [service, lines] of Object.entries(files.logs ?? {})) {
    if (lines.length === 0) continue;
    const pod = podOfApp(service, enrichedPods);
    containerLogs.push({ pod: pod?.metadata.name ?? service, container: pod?.spec?.containers[0]?.name ?? service, lines: lines.slice(-MAX_LOG_LINES) });
  }

  const names = (type: string) => {
    const table = list(type);
    return table === undefined ? [...(files.describe.get(type)?.keys() ?? [])] : namesOfTable(table);
  };
  const observation: KubernetesStateObservation = {
    kind: "kubernetes-state",
    namespace,
    readAt: new Date(now.getTime() - describeLag).toISOString(),
    pods: valid(
      Pod,
      enrichedPods.map((pod) => withSchedulingMessage(pod, mergedEvents)),
      "Pod",
      notes,
    ),
    events: valid(KubernetesEvent, mergedEvents, "Event", notes),
    deployments: valid(Deployment, deployments, "Deployment", notes),
    ...(statefulSets.size === 0 ? {} : { statefulSets: valid(StatefulSet, [...statefulSets.values()], "StatefulSet", notes) }),
    replicaSets: valid(ReplicaSet, replicaSets, "ReplicaSet", notes),
    services: valid(Service, [...services.values()], "Service", notes),
    endpointSlices: valid(EndpointSlice, [...slices.values()], "EndpointSlice", notes),
    resourceQuotas: valid(ResourceQuota, [...quotas.values()], "ResourceQuota", notes),
    persistentVolumeClaims: valid(PersistentVolumeClaim, [...claims.values()], "PersistentVolumeClaim", notes),
    serviceAccounts: names("serviceaccounts"),
    configMaps: names("configmaps"),
    secrets: names("secrets"),
    nodes: valid(Node, [...nodes.values()], "Node", notes),
    persistentVolumes: valid(PersistentVolume, [...volumes.values()], "PersistentVolume", notes),
    storageClasses: valid(StorageClass, [...storageClasses.values()], "StorageClass", notes),
    systemPods: valid(Pod, systemPods, "Pod", notes),
    containerLogs: valid(ContainerLog, containerLogs, "ContainerLog", notes),
  };
  return { observation, notes };
}

/** The items its schema accepts (as it reads them); the others are noted and left out. */
function valid<T extends z.ZodType>(schema: T, items: readonly unknown[], what: string, notes: string[]): Array<z.output<T>> {
  return items.flatMap((item) => {
    const parsed = schema.safeParse(item);
    if (parsed.success) return [parsed.data];
    const name = typeof item === "object" && item !== null && "metadata" in item ? JSON.stringify(item.metadata) : "";
    notes.push(`${what} ${name} left out: ${parsed.error.issues.map((issue) => `${issue.path.join(".")} ${issue.message}`).join("; ")}`);
    return [];
  });
}

/** The names a `get` table lists; `undefined` when the case has no such table (then nothing tells). */
function listedNames(table: string | undefined): Set<string> | undefined {
  return table === undefined ? undefined : new Set(namesOfTable(table));
}

/** The pod of an app: labelled `app=<app>` (or `app.kubernetes.io/name`), else named `<app>-…`; a not-ready one first. */
export function podOfApp(app: string, pods: readonly Pod[]): Pod | undefined {
  const candidates = pods.filter((pod) => pod.metadata.labels?.app === app || pod.metadata.labels?.["app.kubernetes.io/name"] === app);
  const named = candidates.length > 0 ? candidates : pods.filter((pod) => pod.metadata.name.startsWith(`${app}-`));
  const notReady = named.find((pod) => pod.status?.containerStatuses?.some((status) => status.ready === false));
  return notReady ?? [...named].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))[0];
}

/**
 * A pod with what describe does not print taken from its Deployment's template: affinity, image pull
 * secrets, security context, scheduler, the names of its ports; a pod only listed gets the whole template spec. Only a pod of
 * the Deployment's current ReplicaSet runs that template (older ones ran an older spec).
 */
function withTemplate(
  pod: Pod,
  deployments: readonly Deployment[],
  replicaSets: readonly ReplicaSet[],
  described: ReadonlyMap<string, DeploymentDescribe>,
  statefulSets: readonly StatefulSet[],
): Pod {
  const statefulOwner = pod.metadata.ownerReferences?.find((reference) => reference.kind === "StatefulSet")?.name;
  const statefulSet = statefulSets.find((candidate) => candidate.metadata.name === statefulOwner);
  if (statefulSet !== undefined) return withTemplateSpec(pod, statefulSet.spec.template.spec);
  const owner = pod.metadata.ownerReferences?.find((reference) => reference.kind === "ReplicaSet")?.name ?? replicaSetOfPodName(pod.metadata.name);
  if (owner === undefined) return pod;
  const replicaSet = replicaSets.find((candidate) => candidate.metadata.name === owner);
  const deploymentName =
    replicaSet?.metadata.ownerReferences?.find((reference) => reference.kind === "Deployment")?.name ?? owner.replace(/-[a-z0-9]{8,10}$/, "");
  const deployment = deployments.find((candidate) => candidate.metadata.name === deploymentName);
  if (deployment === undefined) return pod;
  const newest = described.get(deploymentName)?.newReplicaSet;
  const ownReplicaSets = replicaSets.filter((candidate) => candidate.metadata.ownerReferences?.some((reference) => reference.name === deploymentName));
  const current = newest === undefined ? ownReplicaSets.length <= 1 : newest === owner;
  if (!current) return pod;
  const listedOnly = pod.metadata.ownerReferences === undefined;
  return withTemplateSpec(
    listedOnly ? { ...pod, metadata: { ...pod.metadata, ownerReferences: [{ kind: "ReplicaSet", name: owner }] } } : pod,
    deployment.spec.template.spec,
  );
}

/** A pod with its template's spec: the whole of it for a pod only listed, else what describe does not print. */
function withTemplateSpec(pod: Pod, template: PodSpec): Pod {
  const listedOnly = pod.spec === undefined || pod.spec.containers.every((container) => /^container-\d+$/.test(container.name));
  if (listedOnly) return { ...pod, spec: { ...template, ...(pod.spec?.nodeName === undefined ? {} : { nodeName: pod.spec.nodeName }) } };
  const spec = pod.spec ?? { containers: [] };
  return {
    ...pod,
    spec: {
      ...spec,
      containers: spec.containers.map((container) =>
        withPortNames(
          container,
          template.containers.find((candidate) => candidate.name === container.name),
        ),
      ),
      ...(template.affinity === undefined ? {} : { affinity: template.affinity }),
      ...(template.imagePullSecrets === undefined ? {} : { imagePullSecrets: template.imagePullSecrets }),
      ...(template.securityContext === undefined ? {} : { securityContext: template.securityContext }),
      ...(template.schedulerName === undefined ? {} : { schedulerName: template.schedulerName }),
    },
  };
}

/**
 * The PodScheduled condition as the scheduler writes it: describe prints its status only, the scheduler's
 * FailedScheduling event of the pod carries the same message it puts there.
 */
function withSchedulingMessage(pod: Pod, events: readonly KubernetesEvent[]): Pod {
  const conditions = pod.status?.conditions;
  if (conditions === undefined || !conditions.some((condition) => condition.type === "PodScheduled" && condition.status === "False")) return pod;
  const failed = events
    .filter((event) => event.reason === "FailedScheduling" && event.involvedObject.kind === "Pod" && event.involvedObject.name === pod.metadata.name)
    .at(-1);
  if (failed?.message === undefined) return pod;
  const message = failed.message;
  return {
    ...pod,
    status: {
      ...pod.status,
      conditions: conditions.map((condition) =>
        condition.type === "PodScheduled" && condition.status === "False" ? { ...condition, reason: "Unschedulable", message } : condition,
      ),
    },
  };
}

/** A container's ports named as its template names them (a Service's `targetPort` may name one). */
function withPortNames(container: Container, template: Container | undefined): Container {
  if (container.ports === undefined || template?.ports === undefined) return container;
  return {
    ...container,
    ports: container.ports.map((port) => {
      const name = template.ports?.find((candidate) => candidate.containerPort === port.containerPort)?.name;
      return name === undefined ? port : { name, ...port };
    }),
  };
}

/** `checkout-7f8c9d6b5-x2k4p` → `checkout-7f8c9d6b5`: a Deployment's pod names its ReplicaSet. */
function replicaSetOfPodName(name: string): string | undefined {
  return /^(.+-[a-z0-9]{8,10})-[a-z0-9]{5}$/.exec(name)?.[1];
}
