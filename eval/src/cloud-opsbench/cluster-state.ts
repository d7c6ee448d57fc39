import {
  ContainerLog,
  Deployment,
  EndpointSlice,
  KubernetesEvent,
  type KubernetesStateObservation,
  Node,
  PersistentVolume,
  PersistentVolumeClaim,
  Pod,
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
  replicaSetAges,
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
  const inNamespace = (object: { metadata: { namespace?: string | undefined } }) => object.metadata.namespace === undefined || object.metadata.namespace === namespace;
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
    pods.set(parsed.pod.metadata.name, withListedStatus(parsed.pod, listedPods.get(parsed.pod.metadata.name)));
    events.push(...parsed.events);
  }
  for (const [name, pod] of listedPods) if (!pods.has(name)) pods.set(name, pod);

  // Deployments: the manifest's spec, the table's and describe's status.
  const rows = deploymentRows(list("deployments") ?? "", now);
  const described = new Map<string, DeploymentDescribe>();
  for (const text of describeTexts("deployments")) {
    const parsed = parseDeploymentDescribe(text, now);
    if (parsed === undefined || !inNamespace(parsed.deployment)) continue;
    described.set(parsed.name, parsed);
    events.push(...parsed.events);
  }
  const manifestDeployments = new Map(manifests.flatMap((manifest) => manifest.deployments).map((deployment) => [deployment.metadata.name, deployment]));
  const deployments: Deployment[] = [];
  for (const name of new Set([...manifestDeployments.keys(), ...described.keys(), ...rows.keys()])) {
    const manifest = manifestDeployments.get(name);
    const describe = described.get(name);
    const row = rows.get(name);
    const base: Deployment = manifest ?? describe?.deployment ?? { metadata: { name, namespace }, spec: { template: { spec: { containers: [] } } } };
    const created = describe?.deployment.metadata.creationTimestamp ?? row?.created;
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
    const created = ages.get(parsed.replicaSet.metadata.name);
    replicaSets.push(created === undefined ? parsed.replicaSet : { ...parsed.replicaSet, metadata: { ...parsed.replicaSet.metadata, creationTimestamp: created } });
    events.push(...parsed.events);
  }

  const enrichedPods = [...pods.values()].map((pod) => withTemplate(pod, deployments, replicaSets, described));

  // Services and their endpoints.
  const services = new Map<string, Service>();
  const slices = new Map<string, EndpointSlice>();
  const describedServices = [];
  for (const text of describeTexts("services")) {
    const parsed = parseServiceDescribe(text, now);
    if (parsed === undefined || !inNamespace(parsed.service)) continue;
    services.set(parsed.service.metadata.name, parsed.service);
    describedServices.push(parsed);
    events.push(...parsed.events);
  }
  for (const service of manifests.flatMap((manifest) => manifest.services)) {
    if (!services.has(service.metadata.name)) services.set(service.metadata.name, service);
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
    events.push(...parsed.events);
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
    events.push(...parsed.events);
  }
  for (const [name, claim] of manifestClaims) if (!claims.has(name) && claimListed(list("persistentvolumeclaims"), name)) claims.set(name, claim);
  const volumes = new Map<string, PersistentVolume>();
  for (const text of describeTexts("persistentvolumes")) {
    const parsed = parseVolumeDescribe(text, now);
    if (parsed === undefined) continue;
    volumes.set(parsed.volume.metadata.name, parsed.volume);
    events.push(...parsed.events);
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
  for (const { namespace: eventNamespace, text } of files.eventLists) events.push(...listedEvents(text, eventNamespace, now));

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
  const statefulSets = manifests.flatMap((manifest) => manifest.statefulSets);
  const observation: KubernetesStateObservation = {
    kind: "kubernetes-state",
    namespace,
    readAt: now.toISOString(),
    pods: valid(Pod, enrichedPods, "Pod", notes),
    events: valid(KubernetesEvent, mergeEvents(events), "Event", notes),
    deployments: valid(Deployment, deployments, "Deployment", notes),
    ...(statefulSets.length === 0 ? {} : { statefulSets: valid(StatefulSet, statefulSets, "StatefulSet", notes) }),
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

function claimListed(table: string | undefined, name: string): boolean {
  return table?.split("\n").some((line) => line.split(/\s+/)[0] === name) ?? false;
}

/** The pod of an app: labelled `app=<app>` (or `app.kubernetes.io/name`), else named `<app>-…`; a not-ready one first. */
export function podOfApp(app: string, pods: readonly Pod[]): Pod | undefined {
  const candidates = pods.filter(
    (pod) => pod.metadata.labels?.app === app || pod.metadata.labels?.["app.kubernetes.io/name"] === app,
  );
  const named = candidates.length > 0 ? candidates : pods.filter((pod) => pod.metadata.name.startsWith(`${app}-`));
  const notReady = named.find((pod) => pod.status?.containerStatuses?.some((status) => status.ready === false));
  return notReady ?? [...named].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))[0];
}

/**
 * A pod with what describe does not print taken from its Deployment's template: affinity, image pull
 * secrets, security context, scheduler; a pod only listed gets the whole template spec. Only a pod of
 * the Deployment's current ReplicaSet runs that template (older ones ran an older spec).
 */
function withTemplate(pod: Pod, deployments: readonly Deployment[], replicaSets: readonly ReplicaSet[], described: ReadonlyMap<string, DeploymentDescribe>): Pod {
  const owner = pod.metadata.ownerReferences?.find((reference) => reference.kind === "ReplicaSet")?.name ?? replicaSetOfPodName(pod.metadata.name);
  if (owner === undefined) return pod;
  const replicaSet = replicaSets.find((candidate) => candidate.metadata.name === owner);
  const deploymentName = replicaSet?.metadata.ownerReferences?.find((reference) => reference.kind === "Deployment")?.name ?? owner.replace(/-[a-z0-9]{8,10}$/, "");
  const deployment = deployments.find((candidate) => candidate.metadata.name === deploymentName);
  if (deployment === undefined) return pod;
  const newest = described.get(deploymentName)?.newReplicaSet;
  const ownReplicaSets = replicaSets.filter((candidate) => candidate.metadata.ownerReferences?.some((reference) => reference.name === deploymentName));
  const current = newest === undefined ? ownReplicaSets.length <= 1 : newest === owner;
  if (!current) return pod;
  const template = deployment.spec.template.spec;
  const listedOnly = pod.spec === undefined || pod.spec.containers.every((container) => /^container-\d+$/.test(container.name));
  if (listedOnly) {
    return { ...pod, metadata: { ...pod.metadata, ownerReferences: [{ kind: "ReplicaSet", name: owner }] }, spec: { ...template, ...(pod.spec?.nodeName === undefined ? {} : { nodeName: pod.spec.nodeName }) } };
  }
  return {
    ...pod,
    spec: {
      ...(pod.spec ?? { containers: [] }),
      ...(template.affinity === undefined ? {} : { affinity: template.affinity }),
      ...(template.imagePullSecrets === undefined ? {} : { imagePullSecrets: template.imagePullSecrets }),
      ...(template.securityContext === undefined ? {} : { securityContext: template.securityContext }),
      ...(template.schedulerName === undefined ? {} : { schedulerName: template.schedulerName }),
    },
  };
}

/** `checkout-7f8c9d6b5-x2k4p` → `checkout-7f8c9d6b5`: a Deployment's pod names its ReplicaSet. */
function replicaSetOfPodName(name: string): string | undefined {
  return /^(.+-[a-z0-9]{8,10})-[a-z0-9]{5}$/.exec(name)?.[1];
}
