// Executions of the example playbook `pods-not-ready` (config/example/playbooks/shop/) against a live
// cluster: the kubernetes connector reads a local API server over HTTP (test kit's fake, seeded with a
// namespace in one kind of trouble among healthy objects), Alertmanager is a real one. Each execution's
// verdict names the fault, and the evidence bundle it keeps replays offline to the same verdict.
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { replayBundle } from "@pes/analysis";
import { resolveCatalogSecrets } from "@pes/config";
import { catalogOf } from "@pes/config/testing";
import { EvidenceBundle, type ExecutionJob, KubernetesStateObservation, type PlaybookExecutionResult, type VerdictCause } from "@pes/contracts";
import { type FakeKubernetesObjects, type KubernetesObject, type LocalAlertmanager, startAlertmanager, startFakeKubernetes } from "@pes/local-services";
import { createLogger } from "@pes/logger";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEngine, type KeptEvidence } from "./engine.js";

const PLAYBOOK = new URL("../../../config/example/playbooks/shop/pods-not-ready.yaml", import.meta.url);
const NAMESPACE = "shop";
const TOKEN = "eyJhbGciOiJSUzI1NiIsImtpZCI6InNob3AtcmVhZGVyIn0.live-cluster-test";
const logger = createLogger({ name: "live-cluster-test", level: "silent" });

/**
 * The issue: a whole minute 6 minutes ago (Alertmanager serves only alerts still firing, so the page must
 * be recent), and every object's times are minutes from it.
 */
const issueAt = new Date(Math.floor(Date.now() / 60_000) * 60_000 - 6 * 60_000);
const at = (minutes: number, seconds = 0) => new Date(issueAt.getTime() + minutes * 60_000 + seconds * 1_000).toISOString().replace(".000Z", "Z");
/** An events.k8s.io MicroTime, as the scheduler writes `eventTime`. */
const microTime = (minutes: number) => new Date(issueAt.getTime() + minutes * 60_000).toISOString().replace(/\.(\d{3})Z$/, ".$1417Z");
/** An object's uid, the same wherever it is referred to (owner references, events' objects). */
function uidOf(kind: string, name: string): string {
  const hex = createHash("sha1").update(`${kind}/${name}`).digest("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
let events = 0;

// -- The cluster's objects, as the API server answers them ----------------------------------------------

function node(
  name: string,
  zone: string,
  ready: { status: "True" | "False"; reason: string; message: string; since: string } = {
    status: "True",
    reason: "KubeletReady",
    message: "kubelet is posting ready status",
    since: at(-720),
  },
): KubernetesObject {
  const notReady = ready.status !== "True";
  return {
    metadata: {
      name,
      uid: uidOf("Node", name),
      resourceVersion: "918273",
      creationTimestamp: at(-43_200),
      labels: {
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": "e2-standard-4",
        "topology.kubernetes.io/zone": zone,
        "cloud.google.com/gke-nodepool": "default-pool",
      },
      annotations: { "node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true" },
    },
    spec: {
      podCIDR: `10.52.${name.slice(-1)}.0/24`,
      providerID: `gce://shop-prod/${zone}/${name}`,
      ...(notReady
        ? {
            taints: [
              { key: "node.kubernetes.io/not-ready", effect: "NoSchedule", timeAdded: ready.since },
              { key: "node.kubernetes.io/not-ready", effect: "NoExecute", timeAdded: at(0, 20) },
            ],
          }
        : {}),
    },
    status: {
      capacity: { cpu: "4", "ephemeral-storage": "98831908Ki", memory: "16393220Ki", pods: "110" },
      allocatable: { cpu: "3920m", "ephemeral-storage": "47060071478", memory: "13334532Ki", pods: "110" },
      conditions: [
        {
          type: "MemoryPressure",
          status: "False",
          lastHeartbeatTime: at(-1),
          lastTransitionTime: at(-720),
          reason: "KubeletHasSufficientMemory",
          message: "kubelet has sufficient memory available",
        },
        {
          type: "DiskPressure",
          status: "False",
          lastHeartbeatTime: at(-1),
          lastTransitionTime: at(-720),
          reason: "KubeletHasNoDiskPressure",
          message: "kubelet has no disk pressure",
        },
        {
          type: "PIDPressure",
          status: "False",
          lastHeartbeatTime: at(-1),
          lastTransitionTime: at(-720),
          reason: "KubeletHasSufficientPID",
          message: "kubelet has sufficient PID available",
        },
        { type: "Ready", status: ready.status, lastHeartbeatTime: at(-1), lastTransitionTime: ready.since, reason: ready.reason, message: ready.message },
      ],
      addresses: [
        { type: "InternalIP", address: `10.128.0.${10 + Number(name.slice(-1))}` },
        { type: "Hostname", address: name },
      ],
      nodeInfo: {
        architecture: "amd64",
        containerRuntimeVersion: "containerd://1.7.22",
        kernelVersion: "6.1.100+",
        kubeletVersion: "v1.30.5-gke.1014001",
        operatingSystem: "linux",
        osImage: "Container-Optimized OS from Google",
      },
    },
  };
}

interface ContainerSpec {
  name: string;
  image: string;
  ports?: { name?: string; containerPort: number; protocol: "TCP" }[];
  env?: unknown[];
  [field: string]: unknown;
}

interface App {
  name: string;
  /** The pods' labels (and the Deployment's selector); default `app: <name>`. */
  labels?: Record<string, string>;
  container: ContainerSpec;
  nodeSelector?: Record<string, string>;
  /** The ReplicaSet's pod-template-hash, and when the Deployment rolled to it. */
  hash: string;
  rolledAt: string;
  revision?: number;
}

const grpcContainer = (image: string, port: number, extra: Record<string, unknown> = {}): ContainerSpec => ({
  name: "server",
  image,
  ports: [{ containerPort: port, protocol: "TCP" }],
  env: [{ name: "PORT", value: String(port) }],
  resources: { requests: { cpu: "100m", memory: "64Mi" }, limits: { cpu: "200m", memory: "128Mi" } },
  readinessProbe: { grpc: { port, service: "" }, periodSeconds: 5, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3 },
  livenessProbe: { grpc: { port, service: "" }, periodSeconds: 10, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3 },
  terminationMessagePath: "/dev/termination-log",
  terminationMessagePolicy: "File",
  imagePullPolicy: "IfNotPresent",
  securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] }, privileged: false, readOnlyRootFilesystem: true },
  ...extra,
});

const labelsOf = (app: App) => app.labels ?? { app: app.name };

function podSpec(app: App): Record<string, unknown> {
  return {
    containers: [app.container],
    restartPolicy: "Always",
    terminationGracePeriodSeconds: 5,
    dnsPolicy: "ClusterFirst",
    serviceAccountName: "default",
    serviceAccount: "default",
    securityContext: { fsGroup: 1000, runAsGroup: 1000, runAsNonRoot: true, runAsUser: 1000 },
    schedulerName: "default-scheduler",
    ...(app.nodeSelector === undefined ? {} : { nodeSelector: app.nodeSelector }),
  };
}

/**
 * A Deployment as `kubectl get deployment -o json` shows it, wanting `replicas` pods: `surging` pods of its
 * previous ReplicaSet are still up (a rollout under way), and `ready` of all its pods are ready.
 */
function deployment(app: App, replicas: number, ready: number, surging = 0): KubernetesObject {
  const revision = String(app.revision ?? 1);
  const available = ready >= replicas;
  const complete = available && surging === 0;
  return {
    metadata: {
      name: app.name,
      namespace: NAMESPACE,
      uid: uidOf("Deployment", app.name),
      resourceVersion: "731902",
      generation: app.revision ?? 1,
      creationTimestamp: at(-10_080),
      labels: { app: app.name },
      annotations: { "deployment.kubernetes.io/revision": revision },
    },
    spec: {
      replicas,
      selector: { matchLabels: labelsOf(app) },
      template: { metadata: { creationTimestamp: null, labels: labelsOf(app) }, spec: podSpec(app) },
      strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: "25%", maxSurge: "25%" } },
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
    },
    status: {
      observedGeneration: app.revision ?? 1,
      replicas: replicas + surging,
      updatedReplicas: replicas,
      ...(ready > 0 ? { readyReplicas: ready, availableReplicas: ready } : {}),
      ...(complete ? {} : { unavailableReplicas: replicas + surging - ready }),
      conditions: [
        available
          ? {
              type: "Available",
              status: "True",
              lastUpdateTime: at(-10_000),
              lastTransitionTime: at(-10_000),
              reason: "MinimumReplicasAvailable",
              message: "Deployment has minimum availability.",
            }
          : {
              type: "Available",
              status: "False",
              lastUpdateTime: app.rolledAt,
              lastTransitionTime: app.rolledAt,
              reason: "MinimumReplicasUnavailable",
              message: "Deployment does not have minimum availability.",
            },
        {
          type: "Progressing",
          status: "True",
          lastUpdateTime: app.rolledAt,
          lastTransitionTime: at(-10_080),
          reason: complete ? "NewReplicaSetAvailable" : "ReplicaSetUpdated",
          message: `ReplicaSet "${app.name}-${app.hash}" ${complete ? "has successfully progressed." : "is progressing."}`,
        },
      ],
    },
  };
}

function replicaSet(app: App, replicas: number, ready: number): KubernetesObject {
  return {
    metadata: {
      name: `${app.name}-${app.hash}`,
      namespace: NAMESPACE,
      uid: uidOf("ReplicaSet", `${app.name}-${app.hash}`),
      resourceVersion: "731899",
      generation: 1,
      creationTimestamp: app.rolledAt,
      labels: { ...labelsOf(app), "pod-template-hash": app.hash },
      annotations: {
        "deployment.kubernetes.io/desired-replicas": String(replicas),
        "deployment.kubernetes.io/max-replicas": String(replicas + 1),
        "deployment.kubernetes.io/revision": String(app.revision ?? 1),
      },
      ownerReferences: [
        { apiVersion: "apps/v1", kind: "Deployment", name: app.name, uid: uidOf("Deployment", app.name), controller: true, blockOwnerDeletion: true },
      ],
    },
    spec: {
      replicas,
      selector: { matchLabels: { ...labelsOf(app), "pod-template-hash": app.hash } },
      template: { metadata: { creationTimestamp: null, labels: { ...labelsOf(app), "pod-template-hash": app.hash } }, spec: podSpec(app) },
    },
    status: { replicas, fullyLabeledReplicas: replicas, observedGeneration: 1, ...(ready > 0 ? { readyReplicas: ready, availableReplicas: ready } : {}) },
  };
}

const DEFAULT_TOLERATIONS = [
  { key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
  { key: "node.kubernetes.io/unreachable", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
];

/** A pod of the app's ReplicaSet; `status` as the kubelet (or the scheduler, for a Pending one) wrote it. */
function pod(app: App, suffix: string, nodeName: string | undefined, status: Record<string, unknown>): KubernetesObject {
  return {
    metadata: {
      name: `${app.name}-${app.hash}-${suffix}`,
      generateName: `${app.name}-${app.hash}-`,
      namespace: NAMESPACE,
      uid: uidOf("Pod", `${app.name}-${app.hash}-${suffix}`),
      resourceVersion: "731950",
      creationTimestamp: app.rolledAt,
      labels: { ...labelsOf(app), "pod-template-hash": app.hash },
      ownerReferences: [
        {
          apiVersion: "apps/v1",
          kind: "ReplicaSet",
          name: `${app.name}-${app.hash}`,
          uid: uidOf("ReplicaSet", `${app.name}-${app.hash}`),
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      ...podSpec(app),
      ...(nodeName === undefined ? {} : { nodeName }),
      tolerations: DEFAULT_TOLERATIONS,
      enableServiceLinks: true,
      preemptionPolicy: "PreemptLowerPriority",
      priority: 0,
    },
    status: { qosClass: "Burstable", ...status },
  };
}

/** A pod whose container runs and is ready since `since`. */
function runningPod(app: App, suffix: string, nodeName: string, ip: string, since = app.rolledAt): KubernetesObject {
  return pod(app, suffix, nodeName, {
    phase: "Running",
    conditions: [
      { type: "PodReadyToStartContainers", status: "True", lastProbeTime: null, lastTransitionTime: since },
      { type: "Initialized", status: "True", lastProbeTime: null, lastTransitionTime: since },
      { type: "Ready", status: "True", lastProbeTime: null, lastTransitionTime: since },
      { type: "ContainersReady", status: "True", lastProbeTime: null, lastTransitionTime: since },
      { type: "PodScheduled", status: "True", lastProbeTime: null, lastTransitionTime: since },
    ],
    hostIP: `10.128.0.${10 + Number(nodeName.slice(-1))}`,
    podIP: ip,
    podIPs: [{ ip }],
    startTime: since,
    containerStatuses: [
      {
        name: "server",
        state: { running: { startedAt: since } },
        lastState: {},
        ready: true,
        started: true,
        restartCount: 0,
        image: app.container.image,
        imageID: `${app.container.image.split(":")[0]}@sha256:2f4b1c0e9a7d3f5b8c6e1a9d0b7c4e2f3a5d8b1c6e9f0a2d4b7c3e5f1a8d6b9c`,
        containerID: `containerd://${app.hash}${suffix}7c0ffee`,
      },
    ],
  });
}

/** A ClusterIP Service on `port`, to `targetPort` (default: the same) of the pods `selector` selects. */
function service(name: string, selector: Record<string, string>, port: number, clusterIP: string, targetPort = port): KubernetesObject {
  return {
    metadata: { name, namespace: NAMESPACE, uid: uidOf("Service", name), resourceVersion: "402118", creationTimestamp: at(-10_080), labels: { app: name } },
    spec: {
      clusterIP,
      clusterIPs: [clusterIP],
      internalTrafficPolicy: "Cluster",
      ipFamilies: ["IPv4"],
      ipFamilyPolicy: "SingleStack",
      ports: [{ name: targetPort === port ? "grpc" : "http", port, protocol: "TCP", targetPort }],
      selector,
      sessionAffinity: "None",
      type: "ClusterIP",
    },
    status: { loadBalancer: {} },
  };
}

/** The Service's EndpointSlice as the endpointslice controller keeps it: `endpoints` null when none match. */
function endpointSlice(name: string, port: number, pods: readonly KubernetesObject[], portName = "grpc"): KubernetesObject {
  const endpoints = pods.map((object) => {
    const status = object.status as { podIP: string };
    const spec = object.spec as { nodeName: string };
    return {
      addresses: [status.podIP],
      conditions: { ready: true, serving: true, terminating: false },
      nodeName: spec.nodeName,
      targetRef: { kind: "Pod", name: object.metadata.name, namespace: NAMESPACE, uid: object.metadata.uid },
      zone: "us-central1-a",
    };
  });
  return {
    metadata: {
      name: `${name}-x7k2q`,
      generateName: `${name}-`,
      namespace: NAMESPACE,
      uid: uidOf("EndpointSlice", `${name}-x7k2q`),
      resourceVersion: "731960",
      creationTimestamp: at(-10_080),
      labels: { "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io", "kubernetes.io/service-name": name },
      ownerReferences: [{ apiVersion: "v1", kind: "Service", name, uid: uidOf("Service", name), controller: true, blockOwnerDeletion: true }],
    },
    addressType: "IPv4",
    endpoints: endpoints.length === 0 ? null : endpoints,
    ports: endpoints.length === 0 ? null : [{ name: portName, port, protocol: "TCP" }],
  };
}

/** A core/v1 Event as the kubelet or a controller records it (`firstTimestamp`, `lastTimestamp`, `count`). */
function event(
  involved: { kind: string; name: string; fieldPath?: string },
  reason: string,
  message: string,
  first: string,
  last: string,
  count: number,
  from: { component: string; host?: string },
  type = "Warning",
): KubernetesObject {
  return {
    metadata: {
      name: `${involved.name}.18${(++events).toString(16).padStart(14, "7")}`,
      namespace: NAMESPACE,
      uid: uidOf("Event", `${involved.name}/${events}`),
      resourceVersion: "731977",
      creationTimestamp: first,
    },
    involvedObject: {
      kind: involved.kind,
      namespace: NAMESPACE,
      name: involved.name,
      uid: uidOf(involved.kind, involved.name),
      apiVersion: involved.kind === "Pod" ? "v1" : "apps/v1",
      resourceVersion: "731950",
      ...(involved.fieldPath === undefined ? {} : { fieldPath: involved.fieldPath }),
    },
    reason,
    message,
    source: from,
    firstTimestamp: first,
    lastTimestamp: last,
    count,
    type,
    eventTime: null,
    reportingComponent: from.component,
    reportingInstance: from.host ?? "",
  };
}

/** The scheduler's events come through events.k8s.io: `eventTime` and `series`, no first and last times. */
function schedulerEvent(podName: string, message: string, firstMinutes: number, lastMinutes: number, count: number): KubernetesObject {
  return {
    metadata: {
      name: `${podName}.18${(++events).toString(16).padStart(14, "7")}`,
      namespace: NAMESPACE,
      uid: uidOf("Event", `${podName}/${events}`),
      resourceVersion: "731978",
      creationTimestamp: at(firstMinutes),
    },
    involvedObject: { kind: "Pod", namespace: NAMESPACE, name: podName, uid: uidOf("Pod", podName), apiVersion: "v1", resourceVersion: "731951" },
    reason: "FailedScheduling",
    message,
    source: {},
    firstTimestamp: null,
    lastTimestamp: null,
    type: "Warning",
    eventTime: microTime(firstMinutes),
    series: { count, lastObservedTime: microTime(lastMinutes) },
    action: "Scheduling",
    reportingComponent: "default-scheduler",
    reportingInstance: "default-scheduler-gke-shop-prod-control-plane",
  };
}

/** kube-system: kube-proxy on every node, and the cluster DNS. */
function systemPods(nodes: readonly string[]): KubernetesObject[] {
  const proxies = nodes.map((nodeName, index) => ({
    metadata: {
      name: `kube-proxy-${nodeName}`,
      namespace: "kube-system",
      uid: uidOf("Pod", `kube-proxy-${nodeName}`),
      creationTimestamp: at(-43_200),
      labels: { component: "kube-proxy", tier: "node" },
    },
    spec: {
      nodeName,
      containers: [{ name: "kube-proxy", image: "gke.gcr.io/kube-proxy-amd64:v1.30.5-gke.1014001" }],
      priorityClassName: "system-node-critical",
    },
    status: {
      phase: "Running",
      hostIP: `10.128.0.${11 + index}`,
      containerStatuses: [{ name: "kube-proxy", ready: true, restartCount: 0, started: true, state: { running: { startedAt: at(-43_200) } } }],
    },
  }));
  const dns = {
    metadata: {
      name: "kube-dns-5b7c9d8f4-q8x2m",
      namespace: "kube-system",
      uid: uidOf("Pod", "kube-dns-5b7c9d8f4-q8x2m"),
      creationTimestamp: at(-43_200),
      labels: { "k8s-app": "kube-dns", "pod-template-hash": "5b7c9d8f4" },
    },
    spec: { nodeName: nodes[0], containers: [{ name: "kubedns", image: "gke.gcr.io/k8s-dns-kube-dns:1.23.0-gke.9" }] },
    status: {
      phase: "Running",
      containerStatuses: [{ name: "kubedns", ready: true, restartCount: 0, started: true, state: { running: { startedAt: at(-43_200) } } }],
    },
  };
  return [...proxies, dns];
}

// -- The shop: healthy apps around each case's broken one -----------------------------------------------

const IMAGES = "us-central1-docker.pkg.dev/shop-prod/boutique";
const NODES = ["gke-shop-prod-default-pool-worker-1", "gke-shop-prod-default-pool-worker-2", "gke-shop-prod-default-pool-worker-3"] as const;
const [WORKER_1, WORKER_2, WORKER_3] = NODES;

const frontend: App = {
  name: "frontend",
  container: grpcContainer(`${IMAGES}/frontend:v0.10.1`, 8080, {
    readinessProbe: { httpGet: { path: "/_healthz", port: 8080, scheme: "HTTP" }, periodSeconds: 10 },
    livenessProbe: { httpGet: { path: "/_healthz", port: 8080, scheme: "HTTP" }, periodSeconds: 10 },
  }),
  hash: "7f9c6d8b54",
  rolledAt: at(-2_880),
};
const redisCart: App = {
  name: "redis-cart",
  container: { name: "redis", image: "redis:7.2-alpine", ports: [{ containerPort: 6379, protocol: "TCP" }] },
  hash: "6b8d5f7c9",
  rolledAt: at(-10_080),
};
const cartservice: App = { name: "cartservice", container: grpcContainer(`${IMAGES}/cartservice:v0.10.1`, 7070), hash: "58c4d7b9f6", rolledAt: at(-2_880) };
const checkoutservice: App = {
  name: "checkoutservice",
  container: grpcContainer(`${IMAGES}/checkoutservice:v0.10.1`, 5050),
  hash: "6d5f9b8c47",
  rolledAt: at(-2_880),
};

/** What every case's cluster holds: three nodes, kube-system, and frontend, cart and redis serving. */
function healthyShop(): Required<
  Pick<
    FakeKubernetesObjects,
    "nodes" | "pods" | "deployments" | "replicaSets" | "services" | "endpointSlices" | "events" | "serviceAccounts" | "configMaps" | "secrets"
  >
> {
  const frontendPods = [runningPod(frontend, "k2x9p", WORKER_1, "10.52.1.14"), runningPod(frontend, "r7m4q", WORKER_3, "10.52.3.22")];
  const cartPods = [runningPod(cartservice, "b5n8w", WORKER_3, "10.52.3.31")];
  const redisPods = [runningPod(redisCart, "t4v6z", WORKER_1, "10.52.1.9")];
  return {
    nodes: NODES.map((name, index) => node(name, `us-central1-${"abc"[index]}`)),
    pods: [...frontendPods, ...cartPods, ...redisPods, ...systemPods(NODES)],
    deployments: [deployment(frontend, 2, 2), deployment(cartservice, 1, 1), deployment(redisCart, 1, 1)],
    replicaSets: [replicaSet(frontend, 2, 2), replicaSet(cartservice, 1, 1), replicaSet(redisCart, 1, 1)],
    services: [
      service("frontend", { app: "frontend" }, 80, "10.56.7.120", 8080),
      service("cartservice", { app: "cartservice" }, 7070, "10.56.3.41"),
      service("redis-cart", { app: "redis-cart" }, 6379, "10.56.9.7"),
    ],
    endpointSlices: [
      endpointSlice("frontend", 8080, frontendPods, "http"),
      endpointSlice("cartservice", 7070, cartPods),
      endpointSlice("redis-cart", 6379, redisPods),
    ],
    // What a namespace's healthy start leaves: the scheduler's and the kubelet's Normal events.
    events: [
      event(
        { kind: "Pod", name: "cartservice-58c4d7b9f6-b5n8w", fieldPath: "spec.containers{server}" },
        "Pulled",
        `Container image "${IMAGES}/cartservice:v0.10.1" already present on machine`,
        at(-2_880),
        at(-2_880),
        1,
        { component: "kubelet", host: WORKER_3 },
        "Normal",
      ),
    ],
    serviceAccounts: [{ metadata: { name: "default", namespace: NAMESPACE, uid: uidOf("ServiceAccount", "default"), creationTimestamp: at(-43_200) } }],
    configMaps: [
      {
        metadata: { name: "kube-root-ca.crt", namespace: NAMESPACE, uid: uidOf("ConfigMap", "kube-root-ca.crt") },
        data: { "ca.crt": "-----BEGIN CERTIFICATE-----\nMIIC…\n-----END CERTIFICATE-----\n" },
      },
    ],
    secrets: [],
  };
}

interface Case {
  name: string;
  /** The paged service (the request's `service` attribute). */
  service: string;
  objects: FakeKubernetesObjects;
  /** What the token may not read (403). */
  forbidden?: readonly string[];
  cause: { kind: string; subject: string; remedy: RegExp };
}

/** productcatalogservice rolled out 4 min before the issue with a node pool no node belongs to. */
function nodeSelectorCase(): Case {
  const shop = healthyShop();
  const catalog: App = {
    name: "productcatalogservice",
    container: grpcContainer(`${IMAGES}/productcatalogservice:v0.10.1`, 3550),
    nodeSelector: { "cloud.google.com/gke-nodepool": "highmem-pool" },
    hash: "8d6b4c9f75",
    rolledAt: at(-4),
  };
  const pending = ["h8s2k", "w9c3n"].map((suffix) =>
    pod(catalog, suffix, undefined, {
      phase: "Pending",
      conditions: [
        {
          type: "PodScheduled",
          status: "False",
          lastProbeTime: null,
          lastTransitionTime: at(-4),
          reason: "Unschedulable",
          message:
            "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
        },
      ],
    }),
  );
  return {
    name: "a Deployment whose nodeSelector matches no node",
    service: "productcatalogservice",
    objects: {
      ...shop,
      pods: [...shop.pods, ...pending],
      deployments: [...shop.deployments, deployment(catalog, 2, 0)],
      replicaSets: [...shop.replicaSets, replicaSet(catalog, 2, 0)],
      services: [...shop.services, service("productcatalogservice", { app: "productcatalogservice" }, 3550, "10.56.12.88")],
      endpointSlices: [...shop.endpointSlices, endpointSlice("productcatalogservice", 3550, [])],
      events: [
        ...shop.events,
        event(
          { kind: "Deployment", name: "productcatalogservice" },
          "ScalingReplicaSet",
          "Scaled up replica set productcatalogservice-8d6b4c9f75 to 2",
          at(-4),
          at(-4),
          1,
          { component: "deployment-controller" },
          "Normal",
        ),
        event(
          { kind: "ReplicaSet", name: "productcatalogservice-8d6b4c9f75" },
          "SuccessfulCreate",
          "Created pod: productcatalogservice-8d6b4c9f75-h8s2k",
          at(-4),
          at(-4),
          1,
          { component: "replicaset-controller" },
          "Normal",
        ),
        event(
          { kind: "ReplicaSet", name: "productcatalogservice-8d6b4c9f75" },
          "SuccessfulCreate",
          "Created pod: productcatalogservice-8d6b4c9f75-w9c3n",
          at(-4),
          at(-4),
          1,
          { component: "replicaset-controller" },
          "Normal",
        ),
        ...pending.map((object) =>
          schedulerEvent(
            object.metadata.name,
            "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
            -4,
            4,
            7,
          ),
        ),
      ],
    },
    cause: {
      kind: "unschedulable/node-selector",
      subject: "deployment/productcatalogservice",
      remedy: /nodeSelector.*deployment\/productcatalogservice|deployment\/productcatalogservice.*nodeSelector/,
    },
  };
}

/** adservice rolled to a tag the registry does not have; its old pod still serves (the rollout is stuck). */
function imageNotFoundCase(): Case {
  const shop = healthyShop();
  const image = `${IMAGES}/adservice:v0.10.99`;
  const previous: App = {
    name: "adservice",
    container: grpcContainer(`${IMAGES}/adservice:v0.10.1`, 9555),
    hash: "5d9c7b6f48",
    rolledAt: at(-2_880),
    revision: 1,
  };
  const rolled: App = { ...previous, container: grpcContainer(image, 9555), hash: "79f8d5c6b4", rolledAt: at(-3), revision: 2 };
  const oldPod = runningPod(previous, "m3p7x", WORKER_2, "10.52.2.17");
  const newPod = pod(rolled, "q6d2v", WORKER_1, {
    phase: "Pending",
    conditions: [
      { type: "PodReadyToStartContainers", status: "True", lastProbeTime: null, lastTransitionTime: at(-3, 2) },
      { type: "Initialized", status: "True", lastProbeTime: null, lastTransitionTime: at(-3, 1) },
      {
        type: "Ready",
        status: "False",
        lastProbeTime: null,
        lastTransitionTime: at(-3, 1),
        reason: "ContainersNotReady",
        message: "containers with unready status: [server]",
      },
      {
        type: "ContainersReady",
        status: "False",
        lastProbeTime: null,
        lastTransitionTime: at(-3, 1),
        reason: "ContainersNotReady",
        message: "containers with unready status: [server]",
      },
      { type: "PodScheduled", status: "True", lastProbeTime: null, lastTransitionTime: at(-3) },
    ],
    hostIP: "10.128.0.11",
    podIP: "10.52.1.40",
    podIPs: [{ ip: "10.52.1.40" }],
    startTime: at(-3, 1),
    containerStatuses: [
      {
        name: "server",
        state: {
          waiting: {
            reason: "ErrImagePull",
            message: `rpc error: code = NotFound desc = failed to pull and unpack image "${image}": failed to resolve reference "${image}": ${image}: not found`,
          },
        },
        lastState: {},
        ready: false,
        started: false,
        restartCount: 0,
        image,
        imageID: "",
      },
    ],
  });
  const from = { component: "kubelet", host: WORKER_1 };
  const container = { kind: "Pod", name: newPod.metadata.name, fieldPath: "spec.containers{server}" };
  return {
    name: "a Deployment rolled to an image tag that does not exist",
    service: "adservice",
    objects: {
      ...shop,
      pods: [...shop.pods, oldPod, newPod],
      deployments: [...shop.deployments, deployment(rolled, 1, 1, 1)],
      replicaSets: [...shop.replicaSets, replicaSet(previous, 1, 1), replicaSet(rolled, 1, 0)],
      services: [...shop.services, service("adservice", { app: "adservice" }, 9555, "10.56.4.203")],
      endpointSlices: [...shop.endpointSlices, endpointSlice("adservice", 9555, [oldPod])],
      events: [
        ...shop.events,
        event(
          { kind: "Deployment", name: "adservice" },
          "ScalingReplicaSet",
          "Scaled up replica set adservice-79f8d5c6b4 from 0 to 1",
          at(-3),
          at(-3),
          1,
          { component: "deployment-controller" },
          "Normal",
        ),
        event(
          { kind: "Pod", name: newPod.metadata.name },
          "Scheduled",
          `Successfully assigned shop/${newPod.metadata.name} to ${WORKER_1}`,
          at(-3),
          at(-3),
          1,
          { component: "default-scheduler" },
          "Normal",
        ),
        event(container, "Pulling", `Pulling image "${image}"`, at(-3, 2), at(5, 40), 5, from, "Normal"),
        event(
          container,
          "Failed",
          `Failed to pull image "${image}": rpc error: code = NotFound desc = failed to pull and unpack image "${image}": failed to resolve reference "${image}": ${image}: not found`,
          at(-3, 3),
          at(5, 41),
          5,
          from,
        ),
        event(container, "Failed", "Error: ErrImagePull", at(-3, 3), at(5, 41), 5, from),
        event(container, "BackOff", `Back-off pulling image "${image}"`, at(-3, 4), at(5, 10), 21, from, "Normal"),
        event(container, "Failed", "Error: ImagePullBackOff", at(-3, 4), at(5, 10), 21, from),
      ],
    },
    cause: { kind: "image-pull/not-found", subject: "deployment/adservice", remedy: /image reference of deployment\/adservice.*adservice:v0\.10\.99/ },
  };
}

/** cartservice's Deployment was recreated with `app: cart-service`: its Service selects `app: cartservice`. */
function serviceSelectorCase(): Case {
  const shop = healthyShop();
  const renamed: App = { ...cartservice, labels: { app: "cart-service" }, hash: "c47f8b5d69", rolledAt: at(-5), revision: 1 };
  const cartPods = [runningPod(renamed, "j2w8r", WORKER_2, "10.52.2.45"), runningPod(renamed, "n5k7t", WORKER_3, "10.52.3.52")];
  return {
    name: "a Service whose selector is one character from its Deployment's labels",
    service: "cartservice",
    objects: {
      ...shop,
      pods: [...shop.pods.filter((object) => !object.metadata.name.startsWith("cartservice-")), ...cartPods],
      deployments: [...shop.deployments.filter((object) => object.metadata.name !== "cartservice"), deployment(renamed, 2, 2)],
      replicaSets: [...shop.replicaSets.filter((object) => !object.metadata.name.startsWith("cartservice-")), replicaSet(renamed, 2, 2)],
      endpointSlices: [
        ...shop.endpointSlices.filter((object) => object.metadata.labels?.["kubernetes.io/service-name"] !== "cartservice"),
        endpointSlice("cartservice", 7070, []),
      ],
      events: [
        event(
          { kind: "Deployment", name: "cartservice" },
          "ScalingReplicaSet",
          "Scaled up replica set cartservice-c47f8b5d69 to 2",
          at(-5),
          at(-5),
          1,
          { component: "deployment-controller" },
          "Normal",
        ),
      ],
    },
    cause: { kind: "service/no-endpoints", subject: "service/cartservice", remedy: /selector of service\/cartservice to app=cart-service/ },
  };
}

/** worker-2's containerd stopped: the kubelet reports the node NotReady; checkoutservice's only pod is there. */
function containerRuntimeCase(): Case {
  const shop = healthyShop();
  const checkoutPod = runningPod(checkoutservice, "v8q4m", WORKER_2, "10.52.2.33");
  const status = checkoutPod.status as { conditions: { type: string; status: string; lastTransitionTime: string }[] };
  // The node lifecycle controller marks the pods of a node not ready; their containers' statuses go stale.
  for (const condition of status.conditions) if (condition.type === "Ready") Object.assign(condition, { status: "False", lastTransitionTime: at(0, 40) });
  const nodes = NODES.map((name, index) =>
    name === WORKER_2
      ? node(name, "us-central1-b", {
          status: "False",
          reason: "KubeletNotReady",
          message: "container runtime is down, PLEG is not healthy: pleg was last seen active 3m12.482s ago; threshold is 3m0s",
          since: at(-1),
        })
      : node(name, `us-central1-${"abc"[index]}`),
  );
  return {
    name: "a node whose container runtime is down",
    service: "checkoutservice",
    objects: {
      ...shop,
      nodes,
      pods: [...shop.pods, checkoutPod],
      deployments: [...shop.deployments, deployment(checkoutservice, 1, 0)],
      replicaSets: [...shop.replicaSets, replicaSet(checkoutservice, 1, 0)],
      services: [...shop.services, service("checkoutservice", { app: "checkoutservice" }, 5050, "10.56.1.19")],
      endpointSlices: [...shop.endpointSlices, endpointSlice("checkoutservice", 5050, [])],
      events: [
        ...shop.events,
        event({ kind: "Pod", name: checkoutPod.metadata.name }, "NodeNotReady", "Node is not ready", at(0, 40), at(0, 40), 1, { component: "node-controller" }),
      ],
    },
    cause: { kind: "node/container-runtime", subject: `node/${WORKER_2}`, remedy: new RegExp(`container runtime.*${WORKER_2}`) },
  };
}

/** paymentservice reads a Secret nobody created; the token may not list Secrets (as deploy/ grants it). */
function missingSecretCase(): Case {
  const shop = healthyShop();
  const payment: App = {
    name: "paymentservice",
    container: grpcContainer(`${IMAGES}/paymentservice:v0.10.1`, 50051, {
      env: [
        { name: "PORT", value: "50051" },
        { name: "GATEWAY_API_KEY", valueFrom: { secretKeyRef: { name: "payment-gateway", key: "api-key" } } },
      ],
    }),
    hash: "9b7d4f6c85",
    rolledAt: at(-2),
  };
  const waiting = pod(payment, "z4h9s", WORKER_3, {
    phase: "Pending",
    conditions: [
      { type: "Initialized", status: "True", lastProbeTime: null, lastTransitionTime: at(-2) },
      {
        type: "Ready",
        status: "False",
        lastProbeTime: null,
        lastTransitionTime: at(-2),
        reason: "ContainersNotReady",
        message: "containers with unready status: [server]",
      },
      { type: "PodScheduled", status: "True", lastProbeTime: null, lastTransitionTime: at(-2) },
    ],
    hostIP: "10.128.0.13",
    podIP: "10.52.3.61",
    startTime: at(-2),
    containerStatuses: [
      {
        name: "server",
        state: { waiting: { reason: "CreateContainerConfigError", message: 'secret "payment-gateway" not found' } },
        lastState: {},
        ready: false,
        started: false,
        restartCount: 0,
        image: payment.container.image,
        imageID: "",
      },
    ],
  });
  const container = { kind: "Pod", name: waiting.metadata.name, fieldPath: "spec.containers{server}" };
  return {
    name: "a container that reads a Secret that does not exist, read without a list of Secrets",
    service: "paymentservice",
    forbidden: ["secrets"],
    objects: {
      ...shop,
      pods: [...shop.pods, waiting],
      deployments: [...shop.deployments, deployment(payment, 1, 0)],
      replicaSets: [...shop.replicaSets, replicaSet(payment, 1, 0)],
      events: [
        ...shop.events,
        event(
          container,
          "Pulled",
          `Container image "${payment.container.image}" already present on machine`,
          at(-2, 1),
          at(5, 30),
          32,
          { component: "kubelet", host: WORKER_3 },
          "Normal",
        ),
        event(container, "Failed", 'Error: secret "payment-gateway" not found', at(-2, 1), at(5, 30), 32, { component: "kubelet", host: WORKER_3 }),
      ],
    },
    cause: { kind: "config/missing-secret", subject: "deployment/paymentservice", remedy: /Secret payment-gateway.*deployment\/paymentservice/ },
  };
}

// -- Executions -----------------------------------------------------------------------------------------

interface Execution {
  result: PlaybookExecutionResult;
  bundle: EvidenceBundle;
}

/** Organization shop with its cluster at `url` (a bearer token from the environment) and its Alertmanager. */
async function shopCatalog(clusterUrl: string, alertsUrl: string) {
  const dataSources = {
    cluster: { type: "kubernetes", url: clusterUrl, auth: { bearerToken: { env: "SHOP_KUBERNETES_TOKEN" } } },
    alerts: { type: "alertmanager", url: alertsUrl },
  };
  const catalog = await catalogOf({
    organizations: [{ id: "shop", clientIds: ["on-call"], dataSources, evidence: { keep: true, retentionDays: 1 } }],
    playbooks: { shop: [await readFile(PLAYBOOK, "utf8")] },
  });
  const { secrets, missing } = resolveCatalogSecrets(catalog, { env: { SHOP_KUBERNETES_TOKEN: TOKEN }, readFile: () => "" });
  expect(missing).toEqual([]);
  return { catalog, secrets };
}

function job(service: string, time: Date, requestId: string): ExecutionJob {
  return {
    orgId: "shop",
    requestId,
    v: 1,
    replyTo: "api-1",
    deadline: Date.now() + 60_000,
    bookName: "pods-not-ready",
    time: time.toISOString(),
    attributes: { service },
    liveRun: false,
  };
}

/** Executes pods-not-ready for the case's service at `time` against its own cluster, keeping the evidence. */
async function execute(testCase: Case, alertsUrl: string, times: readonly Date[]): Promise<Execution[]> {
  const cluster = await startFakeKubernetes(testCase.objects, { token: TOKEN, ...(testCase.forbidden === undefined ? {} : { forbidden: testCase.forbidden }) });
  const { catalog, secrets } = await shopCatalog(cluster.url, alertsUrl);
  const kept: KeptEvidence[] = [];
  const engine = createEngine({
    catalog,
    secrets,
    logger,
    actionTimeoutMs: 20_000,
    maxConcurrentActions: 8,
    keepEvidence: async (evidence) => void kept.push(evidence),
  });
  try {
    const executions: Execution[] = [];
    for (const [index, time] of times.entries()) {
      const { result } = await engine.investigate(job(testCase.service, time, `req-${index}`), undefined, `exec-${testCase.service}-${index}`);
      // As the worker stores it and the API hands it out: JSON, parsed by the contract.
      const bundle = EvidenceBundle.parse(JSON.parse(JSON.stringify(kept.at(-1)?.bundle)));
      expect(bundle.executionId).toBe(`exec-${testCase.service}-${index}`);
      expect(JSON.stringify(bundle)).not.toContain(cluster.url);
      expect(JSON.stringify(bundle)).not.toContain(TOKEN);
      executions.push({ result, bundle });
    }
    return executions;
  } finally {
    await engine.close();
    await cluster.close();
  }
}

function stateOf(bundle: EvidenceBundle): KubernetesStateObservation {
  return KubernetesStateObservation.parse(bundle.actions.find((action) => action.title === "State of shop")?.observation);
}

const causeOf = (result: PlaybookExecutionResult): VerdictCause | undefined => result.verdict?.cause;

let alertmanager: LocalAlertmanager;

beforeAll(async () => {
  alertmanager = await startAlertmanager();
  // The pages: the alert each case's on-call engineer got, firing since a minute before the issue.
  const cases = ["productcatalogservice", "adservice", "cartservice", "checkoutservice", "paymentservice"];
  await alertmanager.postAlerts(
    cases.map((service) => ({
      labels: { alertname: "KubeDeploymentReplicasMismatch", severity: "warning", namespace: NAMESPACE, service, deployment: service },
      annotations: {
        summary: `Pods of ${service} not ready`,
        description: `Deployment ${NAMESPACE}/${service} has not matched the expected number of replicas for longer than 1 minute.`,
      },
      startsAt: new Date(issueAt.getTime() - 60_000),
    })),
  );
}, 60_000);

afterAll(async () => {
  await alertmanager?.stop();
});

describe.each([nodeSelectorCase, imageNotFoundCase, serviceSelectorCase, containerRuntimeCase, missingSecretCase].map((build) => build()))(
  "pods-not-ready against a live cluster: $name",
  (testCase) => {
    let live: Execution;
    let later: Execution;

    beforeAll(async () => {
      [live, later] = (await execute(testCase, alertmanager.url, [issueAt, new Date(issueAt.getTime() + 3 * 60_000)])) as [Execution, Execution];
    }, 60_000);

    it("reads the namespace's state through the connector, and names the fault, its object and its remedy", () => {
      // Every action of the playbook answered: the state, the service's rollouts, its alerts.
      expect(live.bundle.actions.map(({ title, observation }) => [title, observation.kind])).toEqual([
        ["State of shop", "kubernetes-state"],
        [`Rollouts of ${testCase.service}`, "kubernetes-rollouts"],
        [`Alerts firing for ${testCase.service}`, "alertmanager"],
      ]);
      expect(live.result.verdict?.conclusion).toBe("cause");
      expect(causeOf(live.result)).toMatchObject({ kind: testCase.cause.kind, subject: testCase.cause.subject, action: "State of shop", confidence: "high" });
      expect(causeOf(live.result)?.remedy).toMatch(testCase.cause.remedy);
    });

    it("keeps an evidence bundle that replays offline to the same verdict and mitigations", () => {
      const replay = replayBundle(live.bundle);
      expect(replay.verdict).toEqual(live.result.verdict);
      expect(replay.actionableMitigations).toEqual(live.result.actionableMitigations);
      expect(replay.unreadable).toEqual([]);
      // What was read is what a forbidden list leaves: absent, not empty.
      const state = stateOf(live.bundle);
      for (const list of testCase.forbidden ?? []) expect(Object.keys(state)).not.toContain(list);
      if (testCase.forbidden === undefined) expect(state.secrets).toEqual([]);
    });

    it("gives the same cause to an execution 3 minutes later", () => {
      expect(causeOf(later.result)).toEqual(causeOf(live.result));
      expect(replayBundle(later.bundle).verdict).toEqual(later.result.verdict);
    });
  },
);
