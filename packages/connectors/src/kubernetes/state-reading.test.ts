// The kubernetes connector's `state` action against a local API server speaking the Kubernetes API's JSON
// (List objects, Status errors, `limit`, metadata-only lists, pods' logs), seeded with a namespace in
// trouble, another namespace, kube-system and the cluster's nodes and volumes. What the state means is
// the analysis' (kubernetes-state-reading.ts); here: what is read, what is kept, what never is.
import type { KubernetesStateObservation, Observation } from "@pes/contracts";
import {
  type FakeContainerLog,
  type FakeKubernetesObjects,
  type FakeKubernetesOptions,
  type KubernetesObject,
  startFakeKubernetes,
  type TestHttpServer,
} from "@pes/local-services";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ActionRequest, TimeWindow } from "../connector.js";
import { resolveSecrets } from "../data-source-secrets.js";
import { runConnectorAction } from "../run-action.js";
import { createHttpClient } from "../undici-http-client.js";
import { kubernetesConnector } from "./definition.js";
import { kubernetesRuntime } from "./runtime.js";
import { KubernetesAction, KubernetesDataSource } from "./schema.js";
import { MAX_NAMES_PER_LIST, MAX_OBJECTS_PER_LIST, METADATA_ONLY, STATE_LISTS } from "./state-lists.js";
import { LOG_TAIL_LINES, MAX_CONTAINER_LOGS } from "./state-reading.js";

const window: TimeWindow = { start: new Date("2026-11-20T13:08:00Z"), time: new Date("2026-11-20T14:08:00Z"), end: new Date("2026-11-20T14:23:00Z") };
const TOKEN = "k8s-token-0123456789";
/** What the cluster's Secrets and ConfigMaps hold: none of it may reach an observation, in any encoding. */
const SECRET_VALUE = "s3cr3t-db-password-4f1c";
const CONFIG_VALUE = "postgres://checkout:hunter2@db:5432/checkout";
const base64 = (text: string) => Buffer.from(text).toString("base64");

// Server-side fields the contract does not read: dropped when parsed.
const serverMeta = (name: string, namespace: string | undefined, extra: Record<string, unknown> = {}) => ({
  name,
  ...(namespace === undefined ? {} : { namespace }),
  uid: `uid-${name}`,
  resourceVersion: "4711",
  creationTimestamp: "2026-11-20T12:00:00Z",
  managedFields: [{ manager: "kube-controller-manager", operation: "Update", time: "2026-11-20T12:00:00Z" }],
  ...extra,
});
/** A pod template as the API server writes it: its metadata's creationTimestamp is null. */
const template = (app: string, image: string) => ({
  metadata: { creationTimestamp: null, labels: { app } },
  spec: { containers: [{ name: "app", image, resources: { limits: { memory: "256Mi" } }, terminationMessagePath: "/dev/termination-log" }] },
});
const running = { running: { startedAt: "2026-11-20T14:02:10Z" } };
const pod = (name: string, namespace: string, status: Record<string, unknown>, spec: Record<string, unknown> = {}): KubernetesObject => ({
  metadata: serverMeta(name, namespace, { labels: { app: name.split("-")[0] ?? name } }),
  spec: { containers: [{ name: "app", image: `${name}:v1` }], serviceAccountName: "checkout", nodeName: "node-1", dnsPolicy: "ClusterFirst", ...spec },
  status: { qosClass: "Burstable", ...status },
});

const namespaced = (namespace: string, kind: string, name: string, body: Record<string, unknown> = {}): KubernetesObject => ({
  metadata: serverMeta(
    name,
    namespace,
    kind === "ConfigMap" || kind === "Secret" ? { annotations: { "kubectl.kubernetes.io/last-applied-configuration": lastApplied(kind, name) } } : {},
  ),
  ...body,
});
/** `kubectl apply` keeps the whole applied object in an annotation: a Secret's data too, in clear. */
function lastApplied(kind: string, name: string): string {
  return JSON.stringify({
    apiVersion: "v1",
    kind,
    metadata: { name },
    ...(kind === "Secret" ? { stringData: { password: SECRET_VALUE } } : { data: { DATABASE_URL: CONFIG_VALUE } }),
  });
}

const SHOP = {
  pods: [
    pod("checkout-7f8-abc", "shop", {
      phase: "Running",
      conditions: [{ type: "Ready", status: "False", reason: "ContainersNotReady", lastProbeTime: null, lastTransitionTime: "2026-11-20T14:03:00Z" }],
      containerStatuses: [
        {
          name: "app",
          ready: false,
          restartCount: 4,
          state: { waiting: { reason: "CrashLoopBackOff", message: "back-off 40s restarting failed container" } },
          lastState: { terminated: { reason: "OOMKilled", exitCode: 137, finishedAt: "2026-11-20T14:06:30Z" } },
          containerID: "containerd://abc",
        },
      ],
    }),
    pod("checkout-7f8-def", "shop", { phase: "Running", containerStatuses: [{ name: "app", ready: true, restartCount: 0, state: running }] }),
    pod("search-6c4-xyz", "shop", { phase: "Running", containerStatuses: [{ name: "app", ready: false, restartCount: 0, state: running }] }),
    pod("web-5b7-pqr", "shop", {
      phase: "Pending",
      conditions: [
        {
          type: "PodScheduled",
          status: "False",
          reason: "Unschedulable",
          message:
            "0/2 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }, 1 node(s) didn't match Pod's node affinity/selector.",
        },
      ],
    }),
    pod("api-9d2-stu", "shop", {
      phase: "Pending",
      containerStatuses: [
        { name: "app", ready: false, restartCount: 0, state: { waiting: { reason: "ImagePullBackOff", message: 'Back-off pulling image "api:v9"' } } },
      ],
    }),
  ],
  events: [
    namespaced("shop", "Event", "web-5b7-pqr.1", {
      involvedObject: { kind: "Pod", name: "web-5b7-pqr", namespace: "shop" },
      reason: "FailedScheduling",
      message: "0/2 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }.",
      type: "Warning",
      count: 7,
      firstTimestamp: "2026-11-20T14:00:00Z",
      lastTimestamp: "2026-11-20T14:07:00Z",
      source: { component: "default-scheduler" },
      reportingComponent: "default-scheduler",
    }),
    namespaced("shop", "Event", "checkout-7f8.2", {
      involvedObject: { kind: "ReplicaSet", name: "checkout-7f8", namespace: "shop" },
      reason: "FailedCreate",
      message:
        'pods "checkout-7f8-ghi" is forbidden: exceeded quota: compute, requested: limits.memory=256Mi, used: limits.memory=1Gi, limited: limits.memory=1Gi',
      type: "Warning",
      count: 3,
      firstTimestamp: "2026-11-20T14:02:00Z",
      lastTimestamp: "2026-11-20T14:05:00Z",
    }),
  ],
  deployments: [
    namespaced("shop", "Deployment", "checkout", {
      spec: { replicas: 3, selector: { matchLabels: { app: "checkout" } }, template: template("checkout", "checkout:v1.42"), progressDeadlineSeconds: 600 },
      status: {
        replicas: 3,
        readyReplicas: 1,
        unavailableReplicas: 2,
        conditions: [{ type: "Available", status: "False", reason: "MinimumReplicasUnavailable" }],
      },
    }),
  ],
  replicaSets: [
    {
      ...namespaced("shop", "ReplicaSet", "checkout-7f8", {
        spec: { replicas: 3, template: template("checkout", "checkout:v1.42") },
        status: { replicas: 2, readyReplicas: 1 },
      }),
      metadata: serverMeta("checkout-7f8", "shop", {
        annotations: { "deployment.kubernetes.io/revision": "7" },
        ownerReferences: [{ apiVersion: "apps/v1", kind: "Deployment", name: "checkout", uid: "uid-checkout", controller: true }],
      }),
    },
  ],
  statefulSets: [
    namespaced("shop", "StatefulSet", "db", {
      spec: {
        replicas: 1,
        serviceName: "db",
        template: template("db", "postgres:16"),
        volumeClaimTemplates: [
          {
            metadata: { name: "data", creationTimestamp: null },
            spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "10Gi" } } },
            status: { phase: "Pending" },
          },
        ],
      },
      status: { replicas: 1, readyReplicas: 0 },
    }),
  ],
  services: [
    namespaced("shop", "Service", "checkout", {
      spec: {
        type: "ClusterIP",
        selector: { app: "checkout" },
        ports: [{ name: "http", port: 80, targetPort: "http", protocol: "TCP" }],
        clusterIP: "10.96.0.12",
        sessionAffinity: "None",
      },
    }),
  ],
  endpointSlices: [
    {
      metadata: serverMeta("checkout-x1y2z", "shop", { labels: { "kubernetes.io/service-name": "checkout" } }),
      addressType: "IPv4",
      ports: [{ name: "http", port: 8080, protocol: "TCP" }],
      endpoints: [
        {
          addresses: ["10.1.0.7"],
          conditions: { ready: false, serving: false, terminating: false },
          nodeName: "node-1",
          targetRef: { kind: "Pod", name: "checkout-7f8-abc", namespace: "shop" },
        },
      ],
    },
  ],
  resourceQuotas: [
    namespaced("shop", "ResourceQuota", "compute", {
      spec: { hard: { "limits.memory": "1Gi" } },
      status: { hard: { "limits.memory": "1Gi" }, used: { "limits.memory": "1Gi" } },
    }),
  ],
  persistentVolumeClaims: [
    namespaced("shop", "PersistentVolumeClaim", "data-db-0", {
      spec: { accessModes: ["ReadWriteOnce"], storageClassName: "fast", resources: { requests: { storage: "10Gi" } } },
      status: { phase: "Pending" },
    }),
  ],
  serviceAccounts: [namespaced("shop", "ServiceAccount", "default"), namespaced("shop", "ServiceAccount", "checkout")],
  configMaps: [namespaced("shop", "ConfigMap", "checkout-config", { data: { DATABASE_URL: CONFIG_VALUE } })],
  secrets: [
    namespaced("shop", "Secret", "db-creds", { type: "Opaque", data: { password: base64(SECRET_VALUE) } }),
    namespaced("shop", "Secret", "registry", {
      type: "kubernetes.io/dockerconfigjson",
      data: { ".dockerconfigjson": base64(JSON.stringify({ auths: { r: { password: SECRET_VALUE } } })) },
    }),
  ],
};
const OTHER_NAMESPACE = {
  pods: [pod("checkout-1a2-zzz", "other", { phase: "Running", containerStatuses: [{ name: "app", ready: false, restartCount: 9, state: running }] })],
  services: [namespaced("other", "Service", "checkout", { spec: { selector: { app: "checkout" } } })],
  secrets: [namespaced("other", "Secret", "other-creds", { data: { password: base64(SECRET_VALUE) } })],
};
const CLUSTER = {
  nodes: [
    {
      metadata: serverMeta("node-1", undefined),
      spec: { podCIDR: "10.1.0.0/24" },
      status: {
        conditions: [{ type: "Ready", status: "True", lastHeartbeatTime: "2026-11-20T14:07:50Z" }],
        allocatable: { cpu: "3900m", memory: "15Gi", pods: "110" },
        images: [{ names: ["big"] }],
      },
    },
    {
      metadata: serverMeta("node-2", undefined),
      spec: { unschedulable: true, taints: [{ key: "node.kubernetes.io/not-ready", effect: "NoSchedule", timeAdded: null }] },
      status: { conditions: [{ type: "Ready", status: "Unknown", reason: "NodeStatusUnknown", message: "Kubelet stopped posting node status." }] },
    },
  ],
  persistentVolumes: [
    {
      metadata: serverMeta("pv-1", undefined),
      spec: { capacity: { storage: "5Gi" }, accessModes: ["ReadWriteOnce"], storageClassName: "slow", claimRef: null },
      status: { phase: "Available" },
    },
  ],
  storageClasses: [
    {
      metadata: serverMeta("slow", undefined),
      provisioner: "kubernetes.io/no-provisioner",
      volumeBindingMode: "WaitForFirstConsumer",
      reclaimPolicy: "Delete",
    },
  ],
};
const KUBE_SYSTEM = {
  pods: [
    pod("kube-apiserver-cp-1", "kube-system", {
      phase: "Running",
      containerStatuses: [{ name: "kube-apiserver", ready: true, restartCount: 0, state: running }],
    }),
    pod("kube-proxy-node-2", "kube-system", { phase: "Running", containerStatuses: [{ name: "kube-proxy", ready: false, restartCount: 2, state: running }] }),
  ],
};
const LOGS: FakeContainerLog[] = [
  {
    namespace: "shop",
    pod: "checkout-7f8-abc",
    container: "app",
    lines: ["starting checkout"],
    previous: [...Array.from({ length: 80 }, (_, index) => `line ${index}`), "fatal error: runtime: out of memory"],
  },
  { namespace: "shop", pod: "search-6c4-xyz", container: "app", lines: ["GET /healthz 503 index not loaded"] },
];

const objects: FakeKubernetesObjects = {
  pods: [...SHOP.pods, ...OTHER_NAMESPACE.pods, ...KUBE_SYSTEM.pods],
  events: SHOP.events,
  deployments: SHOP.deployments,
  replicaSets: SHOP.replicaSets,
  statefulSets: SHOP.statefulSets,
  services: [...SHOP.services, ...OTHER_NAMESPACE.services],
  endpointSlices: SHOP.endpointSlices,
  resourceQuotas: SHOP.resourceQuotas,
  persistentVolumeClaims: SHOP.persistentVolumeClaims,
  serviceAccounts: SHOP.serviceAccounts,
  configMaps: SHOP.configMaps,
  secrets: [...SHOP.secrets, ...OTHER_NAMESPACE.secrets],
  ...CLUSTER,
  logs: LOGS,
};

const env: Record<string, string> = { PES_TEST_K8S_TOKEN: TOKEN };
const http = createHttpClient();
let cluster: TestHttpServer;
const extra: TestHttpServer[] = [];
beforeAll(async () => {
  cluster = await startFakeKubernetes(objects, { token: TOKEN });
});
afterEach(async () => {
  await Promise.all(extra.splice(0).map((server) => server.close()));
});
afterAll(async () => {
  await cluster?.close();
  await http.close();
});

/** Another API server for one test (refusing lists, or serving no metadata-only lists). */
async function startCluster(options: FakeKubernetesOptions, seeded: FakeKubernetesObjects = objects): Promise<TestHttpServer> {
  const server = await startFakeKubernetes(seeded, { token: TOKEN, ...options });
  extra.push(server);
  return server;
}

function request(
  url: string,
  overrides: Partial<ActionRequest<KubernetesDataSource, KubernetesAction>> = {},
  action: unknown = { namespace: "{{namespace}}", resource: "state" },
) {
  const dataSource = KubernetesDataSource.parse({ type: "kubernetes", url, auth: { bearerToken: { env: "PES_TEST_K8S_TOKEN" } } });
  return {
    title: "Cluster state",
    dataSource,
    secrets: resolveSecrets(dataSource, { env }).secrets,
    http,
    spec: KubernetesAction.parse(action),
    attributes: { namespace: "shop" },
    window,
    signal: AbortSignal.timeout(10_000),
    ...overrides,
  };
}

async function readState(url: string, overrides: Partial<ActionRequest<KubernetesDataSource, KubernetesAction>> = {}): Promise<Observation> {
  return (await runConnectorAction(kubernetesConnector.definition, kubernetesRuntime, request(url, overrides))).observation;
}

function asState(observation: Observation): KubernetesStateObservation {
  if (observation.kind !== "kubernetes-state") throw new Error(`expected a kubernetes-state observation, got ${JSON.stringify(observation)}`);
  return observation;
}
const namesOf = (items: ReadonlyArray<{ metadata: { name: string } }> | undefined) => items?.map(({ metadata }) => metadata.name);
const paths = (server: TestHttpServer, from: number) => server.requests.slice(from).map((seen) => new URL(seen.url, "http://x").pathname);

describe("kubernetes state", () => {
  it("reads every list of the namespace, the cluster's nodes and volumes and kube-system's pods, each under the list's limit", async () => {
    const before = cluster.requests.length;
    const state = asState(await readState(cluster.url));

    expect(state.namespace).toBe("shop");
    expect(Math.abs(Date.parse(state.readAt ?? "") - Date.now())).toBeLessThan(60_000);
    expect(namesOf(state.pods)).toEqual(["checkout-7f8-abc", "checkout-7f8-def", "search-6c4-xyz", "web-5b7-pqr", "api-9d2-stu"]);
    expect(namesOf(state.events)).toEqual(["web-5b7-pqr.1", "checkout-7f8.2"]);
    expect(namesOf(state.deployments)).toEqual(["checkout"]);
    expect(namesOf(state.replicaSets)).toEqual(["checkout-7f8"]);
    expect(namesOf(state.statefulSets)).toEqual(["db"]);
    expect(namesOf(state.services)).toEqual(["checkout"]);
    expect(namesOf(state.endpointSlices)).toEqual(["checkout-x1y2z"]);
    expect(namesOf(state.resourceQuotas)).toEqual(["compute"]);
    expect(namesOf(state.persistentVolumeClaims)).toEqual(["data-db-0"]);
    expect(state.serviceAccounts).toEqual(["default", "checkout"]);
    expect(state.configMaps).toEqual(["checkout-config"]);
    expect(state.secrets).toEqual(["db-creds", "registry"]);
    expect(namesOf(state.nodes)).toEqual(["node-1", "node-2"]);
    expect(namesOf(state.persistentVolumes)).toEqual(["pv-1"]);
    expect(namesOf(state.storageClasses)).toEqual(["slow"]);
    expect(namesOf(state.systemPods)).toEqual(["kube-apiserver-cp-1", "kube-proxy-node-2"]);

    // Each list once, with its limit; the logs of the two failing containers that ran.
    const lists = cluster.requests.slice(before).filter((seen) => !seen.url.includes("/log?"));
    expect(lists.map((seen) => new URL(seen.url, "http://x").pathname).sort()).toEqual(
      [
        "/api/v1/namespaces/shop/pods",
        "/api/v1/namespaces/shop/events",
        "/apis/apps/v1/namespaces/shop/deployments",
        "/apis/apps/v1/namespaces/shop/statefulsets",
        "/apis/apps/v1/namespaces/shop/replicasets",
        "/api/v1/namespaces/shop/services",
        "/apis/discovery.k8s.io/v1/namespaces/shop/endpointslices",
        "/api/v1/namespaces/shop/resourcequotas",
        "/api/v1/namespaces/shop/persistentvolumeclaims",
        "/api/v1/namespaces/shop/serviceaccounts",
        "/api/v1/namespaces/shop/configmaps",
        "/api/v1/namespaces/shop/secrets",
        "/api/v1/nodes",
        "/api/v1/persistentvolumes",
        "/apis/storage.k8s.io/v1/storageclasses",
        "/api/v1/namespaces/kube-system/pods",
      ].sort(),
    );
    for (const seen of lists) {
      expect(seen.method).toBe("GET");
      expect(seen.headers.authorization).toBe(`Bearer ${TOKEN}`);
      const limit = Number(new URL(seen.url, "http://x").searchParams.get("limit"));
      expect(limit === MAX_OBJECTS_PER_LIST || limit === MAX_NAMES_PER_LIST, seen.url).toBe(true);
    }
    expect(STATE_LISTS).toHaveLength(lists.length);
  });

  it("keeps the fields the contract names, as the API wrote them, and drops the others", async () => {
    const state = asState(await readState(cluster.url));
    const crashing = state.pods?.[0];
    expect(crashing?.status?.containerStatuses?.[0]).toEqual({
      name: "app",
      ready: false,
      restartCount: 4,
      state: { waiting: { reason: "CrashLoopBackOff", message: "back-off 40s restarting failed container" } },
      lastState: { terminated: { reason: "OOMKilled", exitCode: 137, finishedAt: "2026-11-20T14:06:30Z" } },
    });
    expect(crashing?.status?.conditions).toEqual([
      { type: "Ready", status: "False", reason: "ContainersNotReady", lastTransitionTime: "2026-11-20T14:03:00Z" },
    ]);
    expect(crashing?.spec).toMatchObject({ serviceAccountName: "checkout", nodeName: "node-1" });
    expect(state.pods?.[3]?.status?.conditions?.[0]).toMatchObject({
      type: "PodScheduled",
      reason: "Unschedulable",
      message: expect.stringContaining("untolerated taint"),
    });
    expect(state.events?.[1]).toMatchObject({
      reason: "FailedCreate",
      count: 3,
      firstTimestamp: "2026-11-20T14:02:00Z",
      lastTimestamp: "2026-11-20T14:05:00Z",
      message: expect.stringContaining("exceeded quota: compute"),
    });
    expect(state.deployments?.[0]).toMatchObject({
      spec: { replicas: 3, template: { metadata: { labels: { app: "checkout" } } } },
      status: { readyReplicas: 1, unavailableReplicas: 2 },
    });
    expect(state.replicaSets?.[0]?.metadata.annotations).toEqual({ "deployment.kubernetes.io/revision": "7" });
    expect(state.statefulSets?.[0]?.spec.volumeClaimTemplates?.[0]?.metadata).toEqual({ name: "data" });
    expect(state.endpointSlices?.[0]?.endpoints?.[0]?.conditions).toEqual({ ready: false, serving: false });
    expect(state.resourceQuotas?.[0]?.status).toEqual({ hard: { "limits.memory": "1Gi" }, used: { "limits.memory": "1Gi" } });
    expect(state.nodes?.[1]).toMatchObject({
      spec: { unschedulable: true, taints: [{ key: "node.kubernetes.io/not-ready", effect: "NoSchedule" }] },
      status: { conditions: [{ status: "Unknown", reason: "NodeStatusUnknown" }] },
    });
    expect(state.nodes?.[0]?.status?.allocatable).toEqual({ cpu: "3900m", memory: "15Gi", pods: "110" });
    expect(state.persistentVolumes?.[0]?.spec).toEqual({
      capacity: { storage: "5Gi" },
      accessModes: ["ReadWriteOnce"],
      storageClassName: "slow",
      claimRef: null,
    });
    expect(state.storageClasses?.[0]).toEqual({
      metadata: expect.objectContaining({ name: "slow" }),
      provisioner: "kubernetes.io/no-provisioner",
      volumeBindingMode: "WaitForFirstConsumer",
    });

    const text = JSON.stringify(state);
    for (const dropped of [
      "managedFields",
      "resourceVersion",
      "qosClass",
      "dnsPolicy",
      "containerID",
      "lastProbeTime",
      "reportingComponent",
      "sessionAffinity",
      "images",
      "timeAdded",
      "terminationMessagePath",
    ]) {
      expect(text, dropped).not.toContain(dropped);
    }
  });

  it("reads ConfigMaps, Secrets and ServiceAccounts as metadata only, and keeps their names alone", async () => {
    const before = cluster.requests.length;
    const state = asState(await readState(cluster.url));
    const byPath = new Map(cluster.requests.slice(before).map((seen) => [new URL(seen.url, "http://x").pathname, seen.headers.accept]));
    for (const plural of ["configmaps", "secrets", "serviceaccounts"]) expect(byPath.get(`/api/v1/namespaces/shop/${plural}`)).toBe(METADATA_ONLY);
    expect(byPath.get("/api/v1/namespaces/shop/pods")).toBe("application/json");
    expect(state.secrets).toEqual(["db-creds", "registry"]);
  });

  it("never keeps a Secret's or a ConfigMap's data, nor the copy of it kubectl leaves in an annotation, even from a server that sends full lists", async () => {
    const fullLists = await startCluster({ metadataOnly: false });
    for (const url of [cluster.url, fullLists.url]) {
      const state = asState(await readState(url));
      expect(state.secrets).toEqual(["db-creds", "registry"]);
      expect(state.configMaps).toEqual(["checkout-config"]);
      const text = JSON.stringify(state);
      for (const value of [SECRET_VALUE, base64(SECRET_VALUE), CONFIG_VALUE, "hunter2", "last-applied-configuration", "dockerconfigjson", "other-creds"]) {
        expect(text, value).not.toContain(value);
      }
    }
  });

  it("reads the last lines of the containers that restarted (their previous run) or are not ready, none of those that never started", async () => {
    const before = cluster.requests.length;
    const state = asState(await readState(cluster.url));
    expect(state.containerLogs).toEqual([
      {
        pod: "checkout-7f8-abc",
        container: "app",
        previous: true,
        lines: [...Array.from({ length: LOG_TAIL_LINES - 1 }, (_, index) => `line ${index + 81 - LOG_TAIL_LINES}`), "fatal error: runtime: out of memory"],
      },
      { pod: "search-6c4-xyz", container: "app", lines: ["GET /healthz 503 index not loaded"] },
    ]);
    const logs = cluster.requests.slice(before).filter((seen) => seen.url.includes("/log?"));
    expect(logs.map((seen) => new URL(seen.url, "http://x")).map((url) => [url.pathname, Object.fromEntries(url.searchParams)])).toEqual(
      expect.arrayContaining([
        [
          "/api/v1/namespaces/shop/pods/checkout-7f8-abc/log",
          { container: "app", tailLines: String(LOG_TAIL_LINES), limitBytes: expect.any(String), previous: "true" },
        ],
        ["/api/v1/namespaces/shop/pods/search-6c4-xyz/log", { container: "app", tailLines: String(LOG_TAIL_LINES), limitBytes: expect.any(String) }],
      ]),
    );
    expect(logs).toHaveLength(2);
  });

  it("reads the logs of at most so many containers, the most restarted first", async () => {
    const crashing = Array.from({ length: MAX_CONTAINER_LOGS + 3 }, (_, index) =>
      pod(`crash-${index}`, "shop", { phase: "Running", containerStatuses: [{ name: "app", ready: false, restartCount: index + 1, state: running }] }),
    );
    const server = await startCluster(
      {},
      { pods: crashing, logs: crashing.map((item) => ({ namespace: "shop", pod: item.metadata.name, container: "app", lines: [], previous: ["boom"] })) },
    );
    const state = asState(await readState(server.url));
    expect(state.containerLogs?.map((log) => log.pod)).toEqual(
      Array.from({ length: MAX_CONTAINER_LOGS }, (_, index) => `crash-${MAX_CONTAINER_LOGS + 2 - index}`),
    );
  });

  it("leaves out a list the token may not read (403), and reads the rest", async () => {
    const refusing = await startCluster({ forbidden: ["secrets", "configmaps", "nodes", "storageclasses", "pods/log"] });
    const state = asState(await readState(refusing.url));
    for (const field of ["secrets", "configMaps", "nodes", "storageClasses", "containerLogs"] as const) expect(state[field], field).toBeUndefined();
    expect(namesOf(state.pods)).toHaveLength(5);
    expect(namesOf(state.persistentVolumes)).toEqual(["pv-1"]);
    expect(state.serviceAccounts).toEqual(["default", "checkout"]);
    expect(namesOf(state.systemPods)).toHaveLength(2);
  });

  it("answers an empty list of logs when no container needs one, and leaves out the logs when the pods cannot be read", async () => {
    const healthy = await startCluster({}, { pods: [SHOP.pods[1] as KubernetesObject] });
    expect(asState(await readState(healthy.url)).containerLogs).toEqual([]);
    const noPods = await startCluster({ forbidden: ["pods"] });
    const state = asState(await readState(noPods.url));
    expect(state.pods).toBeUndefined();
    expect(state.systemPods).toBeUndefined();
    expect(state.containerLogs).toBeUndefined();
    expect(state.services).toHaveLength(1);
  });

  it("fails with the API server's words when every list is refused, or one fails otherwise", async () => {
    const everything = STATE_LISTS.map((list) => list.plural);
    const refusing = await startCluster({ forbidden: everything });
    expect(await readState(refusing.url)).toEqual({
      kind: "failed",
      reason: expect.stringMatching(/^Kubernetes answered 403 Forbidden: .* is forbidden: User "system:serviceaccount:pes:pes" cannot list/),
    });

    const wrongToken = await startFakeKubernetes(objects, { token: "another" });
    extra.push(wrongToken);
    expect(await readState(wrongToken.url)).toEqual({
      kind: "failed",
      reason: expect.stringMatching(/^pods of shop: Kubernetes answered 401 Unauthorized: Unauthorized$/),
    });
  });

  it("asks for no more than the limit and keeps no more, of a namespace with more", async () => {
    const many = Array.from({ length: MAX_OBJECTS_PER_LIST + 20 }, (_, index) =>
      pod(`busy-${String(index).padStart(4, "0")}`, "shop", {
        phase: "Running",
        containerStatuses: [{ name: "app", ready: true, restartCount: 0, state: running }],
      }),
    );
    const big = await startCluster({}, { pods: many });
    const before = big.requests.length;
    const state = asState(await readState(big.url));
    expect(state.pods).toHaveLength(MAX_OBJECTS_PER_LIST);
    expect(state.pods?.at(-1)?.metadata.name).toBe(`busy-${String(MAX_OBJECTS_PER_LIST - 1).padStart(4, "0")}`);
    expect(paths(big, before)).toContain("/api/v1/namespaces/shop/pods");
  });

  it("fails at the deadline, with at most four requests in flight at once", async () => {
    const slow = await startCluster({});
    slow.hold();
    const observing = readState(slow.url, { signal: AbortSignal.timeout(2_000) });
    await slow.waitForRequests(4);
    expect(await observing).toEqual({ kind: "failed", reason: "no answer from Kubernetes before the deadline (timed out)" });
    // Held until the deadline: no fifth request went out while four were in flight.
    expect(slow.requests).toHaveLength(4);
    await slow.waitForAbandoned(4);
  });

  it("takes neither name nor selector", () => {
    expect(KubernetesAction.safeParse({ namespace: "shop", resource: "state" }).success).toBe(true);
    expect(KubernetesAction.safeParse({ namespace: "shop", resource: "state", name: "checkout" }).error?.issues[0]?.message).toMatch(
      /neither name nor selector/,
    );
    expect(KubernetesAction.safeParse({ namespace: "shop", resource: "state", selector: { app: "checkout" } }).success).toBe(false);
    expect(KubernetesAction.safeParse({ resource: "state" }).success).toBe(false);
  });
});
