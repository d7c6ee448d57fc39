import type { Deployment, KubernetesEvent, KubernetesState, Node, Pod, PodSpec, Service, TimeWindow } from "@pes/contracts";
import { describe, expect, it } from "vitest";
import { dominantReason } from "./scheduling-faults.js";
import { stateFindings } from "./kubernetes-state-reading.js";
import { bottomLineOf } from "./summarize.js";
import { judgeExecution } from "./verdict.js";

const NOW = "2026-11-20T14:08:00Z";
const window: TimeWindow = { start: new Date("2026-11-20T13:08:00Z"), time: new Date(NOW), end: new Date("2026-11-20T14:23:00Z") };
const cited = { action: "Cluster state" };

const spec = (fields: Partial<PodSpec> = {}): PodSpec => ({
  containers: [{ name: "server", image: "shop/cart:v1", ports: [{ containerPort: 7070 }], ...(fields.containers?.[0] ?? {}) }],
  ...fields,
});

function deployment(name: string, podSpec: PodSpec, ready = 1, replicas = 1): Deployment {
  return {
    metadata: { name },
    spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: podSpec } },
    status: { replicas, readyReplicas: ready },
  };
}

function pod(name: string, app: string, podSpec: PodSpec, status: Pod["status"]): Pod {
  return {
    metadata: {
      name,
      labels: { app, "pod-template-hash": "7d9f8c6b5" },
      ownerReferences: [{ kind: "ReplicaSet", name: `${app}-7d9f8c6b5`, uid: "1" }],
      creationTimestamp: "2026-11-20T14:00:00Z",
    },
    spec: podSpec,
    status,
  };
}

const running = (name: string, app: string, podSpec = spec()): Pod =>
  pod(name, app, podSpec, { phase: "Running", containerStatuses: [{ name: "server", restartCount: 0, ready: true, state: { running: {} } }] });

function event(kind: string, name: string, reason: string, message: string, at = "2026-11-20T14:05:00Z", type = "Warning"): KubernetesEvent {
  return { metadata: { name: `${name}.${reason}` }, involvedObject: { kind, name }, reason, message, type, firstTimestamp: at, lastTimestamp: at };
}

function read(state: Omit<KubernetesState, "namespace">) {
  return stateFindings({ namespace: "shop", readAt: NOW, ...state }, window, cited);
}

describe("stateFindings", () => {
  it("names a node selector that no node matches, from the scheduler's message and the pod's spec", () => {
    const selecting = spec({ nodeSelector: { disk: "nvme" } });
    const found = read({
      deployments: [deployment("cart", selecting, 0)],
      pods: [pod("cart-7d9f8c6b5-x2k4p", "cart", selecting, { phase: "Pending" })],
      events: [
        event(
          "Pod",
          "cart-7d9f8c6b5-x2k4p",
          "FailedScheduling",
          "0/4 nodes are available: 1 node(s) were unschedulable, 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.",
        ),
      ],
    });
    expect(found).toMatchObject([
      { kind: "fault", mechanism: "unschedulable/node-selector", subject: "deployment/cart", certainty: "decisive", affects: ["pod/cart-7d9f8c6b5-x2k4p"] },
    ]);
    expect(found[0]?.detail).toContain("nodeSelector disk=nvme");
    expect(found[0]?.remedy).toContain("deployment/cart");
  });

  it("names both faults when the node a hostname selector names lost its label and is tainted against the pod", () => {
    const pinned = spec({ nodeSelector: { "kubernetes.io/hostname": "worker-01" } });
    const node = (name: string, labels: Record<string, string>, taints?: Array<{ key: string; value: string; effect: string }>): Node => ({
      metadata: { name, labels },
      spec: taints === undefined ? {} : { taints },
    });
    const found = read({
      deployments: [deployment("cart", pinned, 0)],
      pods: [pod("cart-7d9f8c6b5-x2k4p", "cart", pinned, { phase: "Pending" })],
      nodes: [
        node("worker-01", { "kubernetes.io/os": "linux" }, [{ key: "node-unhealthy", value: "true", effect: "NoExecute" }]),
        node("worker-02", { "kubernetes.io/hostname": "worker-02" }),
      ],
      events: [
        event(
          "Pod",
          "cart-7d9f8c6b5-x2k4p",
          "FailedScheduling",
          "0/2 nodes are available: 1 node(s) had untolerated taint {node-unhealthy: true}, 1 node(s) didn't match Pod's node affinity/selector.",
        ),
      ],
    });
    expect(found.map((fault) => (fault.kind === "fault" ? fault.mechanism : fault.kind))).toEqual(["unschedulable/taint", "unschedulable/node-selector"]);
    expect(found[0]?.detail).toContain("node-unhealthy=true:NoExecute");
  });

  it("reads the reason that excludes the most nodes, not the control plane's cordon", () => {
    expect(dominantReason("0/4 nodes are available: 1 node(s) were unschedulable, 3 Insufficient cpu. preemption: 0/4 nodes are available")).toBe("cpu");
    expect(dominantReason("0/4 nodes are available: 4 node(s) were unschedulable. preemption: 0/4")).toBe("cordoned");
    expect(
      dominantReason(
        "0/4 nodes are available: 1 node(s) had untolerated taint {compute: high-performance}, 1 node(s) were unschedulable, 2 node(s) didn't match Pod's node affinity/selector.",
      ),
    ).toBe("selector");
    expect(dominantReason("0/4 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/4")).toBe("volume");
  });

  it("leaves out refusals the namespace recovered from, and names a quota that refuses pods now", () => {
    const found = read({
      deployments: [deployment("cart", spec()), deployment("currency", spec(), 0, 2)],
      replicaSets: [],
      pods: [running("cart-7d9f8c6b5-x2k4p", "cart")],
      serviceAccounts: ["cart", "currency"],
      events: [
        event(
          "ReplicaSet",
          "cart-7d9f8c6b5",
          "FailedCreate",
          'Error creating: pods "cart-7d9f8c6b5-" is forbidden: error looking up service account shop/cart: serviceaccount "cart" not found',
          "2026-11-20T14:00:00Z",
        ),
        event(
          "ReplicaSet",
          "currency-8587d7cfd7",
          "FailedCreate",
          'Error creating: pods "currency-8587d7cfd7-w4tfs" is forbidden: exceeded quota: cpu-request-quota, requested: requests.cpu=1, used: requests.cpu=10, limited: requests.cpu=10',
        ),
      ],
    });
    expect(found.map(({ mechanism, subject }) => `${mechanism} ${subject}`)).toEqual(["quota/cpu namespace/shop"]);
  });

  it("names a missing ServiceAccount only while it is missing", () => {
    const state = {
      deployments: [deployment("ads", spec({ serviceAccountName: "ads-sa" }), 0)],
      pods: [],
      events: [
        event(
          "ReplicaSet",
          "ads-6f86c56644",
          "FailedCreate",
          'Error creating: pods "ads-6f86c56644-" is forbidden: error looking up service account shop/ads-sa: serviceaccount "ads-sa" not found',
        ),
      ],
    };
    expect(read({ ...state, serviceAccounts: ["default"] })).toMatchObject([{ mechanism: "admission/service-account", subject: "deployment/ads" }]);
    expect(read({ ...state, serviceAccounts: ["default", "ads-sa"] })).toEqual([]);
  });

  it("tells image pull failures apart by the runtime's message", () => {
    const pulling = (message: string) =>
      read({
        deployments: [deployment("ads", spec(), 0)],
        pods: [
          pod(
            "ads-7d9f8c6b5-r2s5r",
            "ads",
            { ...spec(), nodeName: "worker-03" },
            {
              phase: "Pending",
              containerStatuses: [
                { name: "server", restartCount: 0, ready: false, image: "ghost.example.net/ads:v1", state: { waiting: { reason: "ErrImagePull", message } } },
              ],
            },
          ),
        ],
      })[0]?.mechanism;
    expect(pulling('failed to resolve reference "ghost.example.net/ads:v1": dial tcp: lookup ghost.example.net on 10.0.0.10:53: no such host')).toBe(
      "image-pull/dns",
    );
    expect(pulling('rpc error: code = NotFound desc = failed to pull and unpack image "docker.io/library/redis:alpinee": not found')).toBe(
      "image-pull/not-found",
    );
    expect(pulling("failed to authorize: failed to fetch anonymous token: 401 Unauthorized")).toBe("image-pull/unauthorized");
  });

  it("reads a liveness probe against a port the container does not serve", () => {
    const probing = spec({
      containers: [{ name: "server", ports: [{ containerPort: 5050 }], livenessProbe: { grpc: { port: 5051 }, initialDelaySeconds: 5 } }],
    });
    const found = read({
      deployments: [deployment("checkout", probing)],
      pods: [
        pod(
          "checkout-7d9f8c6b5-stklt",
          "checkout",
          { ...probing, nodeName: "worker-02" },
          {
            phase: "Running",
            containerStatuses: [
              { name: "server", restartCount: 2, ready: true, state: { running: {} }, lastState: { terminated: { reason: "Error", exitCode: 137 } } },
            ],
          },
        ),
      ],
      events: [
        event(
          "Pod",
          "checkout-7d9f8c6b5-stklt",
          "Unhealthy",
          'Liveness probe failed: timeout: failed to connect service "172.20.2.215:5051" within 1s: context deadline exceeded',
        ),
      ],
    });
    expect(found).toMatchObject([{ mechanism: "probe/liveness-port", subject: "deployment/checkout" }]);
  });

  it("names a Service whose selector matches no pod, and one whose targetPort the pods do not serve", () => {
    const service = (name: string, selector: Record<string, string>, targetPort: number): Service => ({
      metadata: { name },
      spec: { selector, ports: [{ port: 7070, targetPort }] },
    });
    const state = { deployments: [deployment("cart", spec())], pods: [running("cart-7d9f8c6b5-x2k4p", "cart")] };
    expect(read({ ...state, services: [service("cart", { app: "cart-v2" }, 7070)] })).toMatchObject([
      { mechanism: "service/no-endpoints", subject: "service/cart" },
    ]);
    expect(read({ ...state, services: [service("cart", { app: "cart" }, 7071)] })).toMatchObject([
      { mechanism: "service/wrong-target-port", subject: "service/cart" },
    ]);
    expect(read({ ...state, services: [service("cart", { app: "cart" }, 7070)] })).toEqual([]);
  });

  it("names an address one slip from a Service's name, decisive when the container's log names it failing", () => {
    const calling = spec({
      containers: [{ name: "server", ports: [{ containerPort: 7070 }], env: [{ name: "REDIS_ADDR", value: "redis-cart-invalid:6379" }] }],
    });
    const state = {
      deployments: [deployment("cart", calling), deployment("redis-cart", spec())],
      pods: [running("cart-7d9f8c6b5-x2k4p", "cart", calling), running("redis-cart-7d9f8c6b5-aaaaa", "redis-cart")],
      services: [
        { metadata: { name: "redis-cart" }, spec: { selector: { app: "redis-cart" }, ports: [{ port: 6379, targetPort: 7070 }] } },
        { metadata: { name: "cart" }, spec: { selector: { app: "cart" }, ports: [{ port: 7070 }] } },
      ],
    };
    expect(read(state)).toMatchObject([{ mechanism: "dependency/wrong-address", subject: "deployment/cart", certainty: "suggestive" }]);
    const logged = read({
      ...state,
      containerLogs: [
        { pod: "cart-7d9f8c6b5-x2k4p", container: "server", lines: ["RedisConnectionException: UnableToConnect on redis-cart-invalid:6379/Interactive"] },
      ],
    });
    expect(logged).toMatchObject([{ mechanism: "dependency/wrong-address", certainty: "decisive" }]);
  });

  it("names a node whose container runtime is down, and leaves out its pods' own trouble", () => {
    const node: Node = {
      metadata: { name: "worker-01" },
      status: {
        conditions: [
          { type: "Ready", status: "False", reason: "KubeletNotReady", message: "container runtime is down", lastTransitionTime: "2026-11-20T14:02:00Z" },
        ],
      },
    };
    const placed = { ...spec(), nodeName: "worker-01" };
    const found = read({
      nodes: [node],
      deployments: [deployment("cart", placed, 0)],
      pods: [
        pod("cart-7d9f8c6b5-x2k4p", "cart", placed, {
          phase: "Running",
          containerStatuses: [
            { name: "server", restartCount: 3, ready: false, state: { waiting: { reason: "CrashLoopBackOff" } }, lastState: { terminated: { exitCode: 1 } } },
          ],
        }),
      ],
    });
    expect(found).toMatchObject([{ mechanism: "node/container-runtime", subject: "node/worker-01", affects: ["pod/cart-7d9f8c6b5-x2k4p"] }]);
  });

  it("is the likely cause over a change before it, and two independent faults are ambiguous", () => {
    const selecting = spec({ nodeSelector: { disk: "nvme" } });
    const pending = {
      deployments: [deployment("cart", selecting, 0)],
      pods: [pod("cart-7d9f8c6b5-x2k4p", "cart", selecting, { phase: "Pending" })],
      events: [event("Pod", "cart-7d9f8c6b5-x2k4p", "FailedScheduling", "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.")],
    };
    const change = {
      gadget: "Deploys",
      evidence: { kind: "change" as const, action: "Deploys", change: "deploy" as const, subject: "cart", at: new Date("2026-11-20T14:04:00Z") },
    };
    const faults = read(pending).map((evidence) => ({ gadget: "Cluster", evidence }));
    const { verdict } = judgeExecution([...faults, change], { time: window.time });
    expect(verdict).toMatchObject({ conclusion: "cause", cause: { kind: "unschedulable/node-selector", subject: "deployment/cart", confidence: "high" } });
    expect(verdict.cause?.remedy).toContain("nodeSelector");
    const quota = read({
      deployments: [deployment("currency", spec(), 0, 2)],
      pods: [],
      events: [
        event(
          "ReplicaSet",
          "currency-8587d7cfd7",
          "FailedCreate",
          'Error creating: pods "currency-8587d7cfd7-w" is forbidden: exceeded quota: pod-quota, requested: pods=1, used: pods=10, limited: pods=10',
        ),
      ],
    }).map((evidence) => ({ gadget: "Cluster", evidence }));
    const both = judgeExecution([...faults, ...quota], { time: window.time }).verdict;
    expect(both).toMatchObject({ conclusion: "ambiguous", cause: { confidence: "low" }, alternative: { confidence: "low" } });
  });

  it("says in the bottom line what the fault is and what would undo it, once", () => {
    const selecting = spec({ nodeSelector: { disk: "nvme" } });
    const faults = read({
      deployments: [deployment("cart", selecting, 0)],
      pods: [pod("cart-7d9f8c6b5-x2k4p", "cart", selecting, { phase: "Pending" })],
      events: [event("Pod", "cart-7d9f8c6b5-x2k4p", "FailedScheduling", "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.")],
    }).map((evidence) => ({ gadget: "Cluster", evidence }));
    const text = bottomLineOf(judgeExecution(faults, { time: window.time }), {});
    expect(text).toContain("likely cause: Cluster state (Cluster): deployment/cart cannot be scheduled: no node matches its node selector");
    expect(text).toContain("Fix the nodeSelector of deployment/cart (disk=nvme)");
    expect(text.split("cannot be scheduled").length).toBe(2);
  });

  it("finds nothing in a namespace whose objects all run", () => {
    expect(read({ deployments: [deployment("cart", spec())], pods: [running("cart-7d9f8c6b5-x2k4p", "cart")], services: [] })).toEqual([]);
  });

  it("names a missing Secret from the kubelet's own message, with no list of Secrets (RBAC refused it)", () => {
    const reading = spec({
      containers: [{ name: "server", env: [{ name: "DB_PASSWORD", valueFrom: { secretKeyRef: { name: "db-creds", key: "password" } } }] }],
    });
    const found = read({
      deployments: [deployment("cart", reading, 0)],
      pods: [
        pod(
          "cart-7d9f8c6b5-x2k4p",
          "cart",
          { ...reading, nodeName: "worker-02" },
          {
            phase: "Pending",
            containerStatuses: [
              {
                name: "server",
                restartCount: 0,
                ready: false,
                state: { waiting: { reason: "CreateContainerConfigError", message: 'secret "db-creds" not found' } },
              },
            ],
          },
        ),
      ],
      events: [event("Pod", "cart-7d9f8c6b5-x2k4p", "Failed", 'Error: secret "db-creds" not found')],
    });
    expect(found).toMatchObject([{ mechanism: "config/missing-secret", subject: "deployment/cart", certainty: "decisive" }]);
    expect(found[0]?.remedy).toContain("db-creds");
  });
});
