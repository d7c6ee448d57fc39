import type {
  ContainerStatus,
  Deployment,
  KubernetesEvent,
  KubernetesEventsObservation,
  KubernetesPodsObservation,
  Pod,
  ReplicaSet,
  TimeWindow,
} from "@pes/contracts";
import { describe, expect, it } from "vitest";
import type { Evidence, MetricEvidence } from "./evidence.js";
import { shortAnswer } from "./evidence-text.js";
import { eventFindings, leastRestartSpanMs, podFindings, rolloutFindings } from "./kubernetes-reading.js";
import { readObservation } from "./observation-reading.js";
import type { Finding } from "./ranking.js";
import { judgeExecution } from "./verdict.js";

const window: TimeWindow = { start: new Date("2026-11-20T13:08:00Z"), time: new Date("2026-11-20T14:08:00Z"), end: new Date("2026-11-20T14:23:00Z") };

describe("podFindings", () => {
  // test/scenarios: node-oom, where a job crash-looping for six hours read as a symptom of the incident.
  it("dates a pod whose restarts cannot fit in the window at the earliest they can have begun", () => {
    const crashLooping = (restartCount: number): Pod => ({
      metadata: { name: "report-generator-5d4-q7k" },
      status: {
        containerStatuses: [
          {
            name: "report-generator",
            restartCount,
            state: { waiting: { reason: "CrashLoopBackOff" } },
            lastState: { terminated: { reason: "Error", exitCode: 1, finishedAt: "2026-11-20T14:04:00Z" } },
          },
        ],
      },
    });
    expect(leastRestartSpanMs(1)).toBe(0);
    expect(leastRestartSpanMs(6)).toBe(310_000);
    expect(leastRestartSpanMs(7)).toBe(610_000);
    // 71 restarts: 10 + 20 + 40 + 80 + 160 s, then 65 × 5 min, at least 5 h 30 min 10 s before the last.
    const [old] = podFindings([crashLooping(71)], undefined, window, { action: "Pods" });
    expect(old).toMatchObject({ reason: "CrashLoopBackOff", onset: new Date(Date.parse("2026-11-20T14:04:00Z") - 19_810_000) });
    // A few restarts fit in the window: dated at the last one, as ever.
    const [recent] = podFindings([crashLooping(4)], undefined, window, { action: "Pods" });
    expect(recent).toMatchObject({ onset: new Date("2026-11-20T14:04:00Z") });
  });
});

/** A core/v1 event as the API server lists it: first seen `first`, last seen `last` (`count` times). */
function k8sEvent(
  kind: string,
  name: string,
  reason: string,
  message: string,
  first: string,
  fields: { type?: string; last?: string; count?: number; fieldPath?: string } = {},
): KubernetesEvent {
  return {
    metadata: { name: `${name}.${reason}.${first}` },
    involvedObject: { kind, name, ...(fields.fieldPath === undefined ? {} : { fieldPath: fields.fieldPath }) },
    reason,
    message,
    type: fields.type ?? "Normal",
    count: fields.count ?? 1,
    firstTimestamp: `2026-11-20T${first}Z`,
    lastTimestamp: `2026-11-20T${fields.last ?? first}Z`,
  };
}

const clock = (time: string) => new Date(`2026-11-20T${time}Z`);
const IMAGE = "registry.example/shop/checkout:v2.3.1";
/** The image a Deployment's pods ran before: what a roll back returns to. */
const ranBefore = (pod: string, at: string) => [
  k8sEvent("Pod", pod, "Pulled", 'Container image "registry.example/shop/checkout:v2.3.0" already present on machine', at, {
    fieldPath: "spec.containers{checkout}",
  }),
];
const pulled = (pod: string, at: string) => [
  k8sEvent("Pod", pod, "Pulling", `Pulling image "${IMAGE}"`, at, { fieldPath: "spec.containers{checkout}" }),
  k8sEvent("Pod", pod, "Pulled", `Successfully pulled image "${IMAGE}" in 1.204s (1.204s including waiting). Image size: 52428800 bytes.`, at, {
    fieldPath: "spec.containers{checkout}",
  }),
  k8sEvent("Pod", pod, "Started", "Started container checkout", at, { fieldPath: "spec.containers{checkout}" }),
];

describe("eventFindings: a release seen only in the kubelet's events", () => {
  const cited = { action: "Events of checkout" };

  it("reads pods pulling a new image as a deploy of it, at the first pull, on those pods, and lists the other events", () => {
    const events = [
      ...ranBefore("checkout-5b6c4f9d8-k2m9z", "13:20:00"),
      ...pulled("checkout-7d9f8c6b5-x2k4p", "14:01:10"),
      ...pulled("checkout-7d9f8c6b5-b5n2q", "14:01:40"),
    ];
    const found = eventFindings(events, "checkout", window, cited);
    expect(found.filter((evidence) => evidence.kind === "change")).toEqual([
      {
        kind: "change",
        action: "Events of checkout",
        change: "deploy",
        subject: "checkout",
        detail: "checkout:v2.3.1",
        at: clock("14:01:10"),
        pods: ["pod/checkout-7d9f8c6b5-x2k4p", "pod/checkout-7d9f8c6b5-b5n2q"],
      },
    ]);
    // The pulls are the change; what else happened is still listed, as events that are not warnings.
    expect(found.flatMap((evidence) => (evidence.kind === "event" ? [evidence.reason] : []))).toEqual(["Started", "Started", "Pulled"]);
    expect(shortAnswer(found[0] as Evidence, window.time)).toBe(
      "Events of checkout: deploy of checkout to checkout:v2.3.1 at 14:01 UTC on pod/checkout-7d9f8c6b5-x2k4p and pod/checkout-7d9f8c6b5-b5n2q",
    );
  });

  it("reads a Deployment scaling up a ReplicaSet from 0 as a deploy, at the scale-up, of the images its pods pulled", () => {
    const events = [
      k8sEvent("Deployment", "checkout", "ScalingReplicaSet", "Scaled up replica set checkout-7d9f8c6b5 to 1 from 0", "14:00:50"),
      ...pulled("checkout-7d9f8c6b5-x2k4p", "14:01:10"),
      k8sEvent("Deployment", "checkout", "ScalingReplicaSet", "Scaled down replica set checkout-5b6c4f9d8 to 1 from 2", "14:01:30"),
    ];
    expect(eventFindings(events, "checkout", window, cited).filter((evidence) => evidence.kind === "change")).toMatchObject([
      { change: "deploy", subject: "checkout", detail: "checkout:v2.3.1", at: clock("14:00:50"), pods: ["pod/checkout-7d9f8c6b5-x2k4p"] },
    ]);
    // Kubernetes before 1.26 says no "from": a scale-up that replaced another ReplicaSet is a rollout too.
    const older = [
      k8sEvent("Deployment", "checkout", "ScalingReplicaSet", "Scaled up replica set checkout-7d9f8c6b5 to 1", "14:00:50"),
      k8sEvent("Deployment", "checkout", "ScalingReplicaSet", "Scaled down replica set checkout-5b6c4f9d8 to 1", "14:01:30"),
    ];
    expect(eventFindings(older, "checkout", window, cited).filter((evidence) => evidence.kind === "change")).toMatchObject([
      { change: "deploy", subject: "checkout", at: clock("14:00:50") },
    ]);
  });

  it("reads no release from scaling the running ReplicaSet, a container restarted on its image, or a pod moved to another node", () => {
    const scaled = [
      k8sEvent("Deployment", "checkout", "ScalingReplicaSet", "Scaled up replica set checkout-7d9f8c6b5 to 5 from 3", "14:01:00"),
      k8sEvent("Deployment", "checkout", "ScalingReplicaSet", "Scaled up replica set checkout-7d9f8c6b5 to 6", "14:02:00"),
    ];
    const restarted = [k8sEvent("Pod", "checkout-7d9f8c6b5-x2k4p", "Pulled", `Container image "${IMAGE}" already present on machine`, "14:03:00")];
    // Its sibling ran the image before the pod was rescheduled onto a node that had to pull it.
    const moved = [
      k8sEvent("Pod", "checkout-7d9f8c6b5-x2k4p", "Pulled", `Container image "${IMAGE}" already present on machine`, "13:40:00"),
      ...pulled("checkout-7d9f8c6b5-q7wzt", "14:04:00"),
    ];
    for (const events of [scaled, restarted, moved]) {
      expect(eventFindings(events, "checkout", window, cited).map((evidence) => evidence.kind)).not.toContain("change");
    }
  });

  it("names the workload a pod's generated name says: a StatefulSet's ordinal, a DaemonSet's suffix", () => {
    // Each after a sibling ran the previous image.
    const subjects = (pod: string, sibling: string) =>
      eventFindings(
        [
          k8sEvent("Pod", sibling, "Pulled", 'Container image "redis:7.2.3" already present on machine', "13:50:00"),
          k8sEvent("Pod", pod, "Pulling", 'Pulling image "redis:7.2.4"', "14:01:00"),
        ],
        undefined,
        window,
        cited,
      ).flatMap((evidence) => (evidence.kind === "change" ? [evidence.subject] : []));
    expect(subjects("cart-redis-0", "cart-redis-1")).toEqual(["cart-redis"]);
    expect(subjects("node-exporter-x2k4p", "node-exporter-b5n2q")).toEqual(["node-exporter"]);
    expect(subjects("checkout-api-7d9f8c6b5-x2k4p", "checkout-api-5b6c4f9d8-k2m9z")).toEqual(["checkout-api"]);
  });

  it("makes the release the likely cause of the errors that began right after it, as a deploy tracker's would be", () => {
    const events: KubernetesEventsObservation = {
      kind: "kubernetes-events",
      name: "checkout",
      items: [...ranBefore("checkout-5b6c4f9d8-k2m9z", "13:20:00"), ...pulled("checkout-7d9f8c6b5-x2k4p", "14:01:10")],
    };
    const errors: MetricEvidence = {
      kind: "metric",
      action: "Error ratio of checkout",
      labels: {},
      seriesCount: 1,
      value: 0.14,
      baseline: 0.004,
      low: 0.003,
      high: 0.005,
      ratio: 35,
      severity: 34,
      abnormal: true,
      onset: clock("14:02:15"),
      baselineMs: 3_600_000,
    };
    const findings: Finding[] = [
      { gadget: "Traffic of checkout", evidence: errors },
      ...readObservation(events, { action: "Events of checkout", window }).map((evidence) => ({ gadget: "Changes to checkout", evidence })),
    ];
    const { verdict } = judgeExecution(findings, { time: window.time });
    expect(verdict.conclusion).toBe("cause");
    expect(verdict.cause).toEqual({
      kind: "deploy",
      subject: "checkout",
      detail: "checkout:v2.3.1",
      action: "Events of checkout",
      onset: "2026-11-20T14:01:10.000Z",
      confidence: "high",
    });
  });
});

describe("a change is a cause only when there is something to roll back to", () => {
  const cited = { action: "Events" };
  const changes = (events: KubernetesEvent[]) => eventFindings(events, undefined, window, cited).filter((evidence) => evidence.kind === "change");

  // HolmesGPT's recorded cases (test/scenarios/bundles/holmesgpt): each read as a deploy that beat the symptoms.
  it("reads no release from a Deployment's creation, a bare pod's first pull, or a pull that never succeeded", () => {
    // 01_oom_kill: the first ReplicaSet of a new Deployment, its pod pulling the image for the first time.
    const created = [
      k8sEvent("Deployment", "analytics-exporter-fast", "ScalingReplicaSet", "Scaled up replica set analytics-exporter-fast-76897854c to 1", "14:00:00"),
      k8sEvent("Pod", "analytics-exporter-fast-76897854c-cw5wh", "Pulled", 'Successfully pulled image "memory-eater:1.0" in 901ms', "14:00:02"),
    ];
    // 02_crashloop_backoff: a bare pod, named like nothing else.
    const bare = [
      k8sEvent("Pod", "logging-agent", "Pulling", 'Pulling image "busybox:1.28"', "14:00:00"),
      k8sEvent("Pod", "logging-agent", "Pulled", 'Successfully pulled image "busybox:1.28" in 7.557s', "14:00:08"),
    ];
    // 04_image_pull_backoff: the image was never pulled.
    const neverPulled = [
      k8sEvent("Pod", "customer-relations-webapp-5d98ffcfd-tz4nc", "Pulling", 'Pulling image "yourcompany/crw:latest"', "14:00:00", {
        count: 3,
        last: "14:01:00",
      }),
      k8sEvent("Pod", "customer-relations-webapp-5d98ffcfd-tz4nc", "Failed", 'Failed to pull image "yourcompany/crw:latest": pull access denied', "14:00:00", {
        type: "Warning",
      }),
    ];
    for (const events of [created, bare, neverPulled]) expect(changes(events)).toEqual([]);
    // Created, then scaled down another ReplicaSet: a rollout.
    expect(
      changes([
        ...created,
        k8sEvent("Deployment", "analytics-exporter-fast", "ScalingReplicaSet", "Scaled down replica set analytics-exporter-fast-5b6c4f9d8 to 0", "14:00:30"),
      ]),
    ).toMatchObject([{ change: "deploy", subject: "analytics-exporter-fast" }]);
  });

  it("reads no rollout from a Deployment's first ReplicaSet", () => {
    const deployment: Deployment = {
      metadata: { name: "user-profile", uid: "uid-1" },
      spec: { template: { spec: { containers: [{ name: "web", image: "nginx" }] } } },
    };
    const first: ReplicaSet = {
      metadata: {
        name: "user-profile-659d4dd659",
        creationTimestamp: "2026-11-20T14:00:00Z",
        annotations: { "deployment.kubernetes.io/revision": "1" },
        ownerReferences: [{ kind: "Deployment", name: "user-profile", uid: "uid-1" }],
      },
      spec: { template: { spec: { containers: [{ name: "web", image: "nginx" }] } } },
    };
    expect(rolloutFindings([deployment], [first], window, cited)).toEqual([]);
  });
});

describe("an OOM kill and the crash loop of the same container: one story", () => {
  // The pod's status dates its latest OOM kill (14:05); the kubelet began backing off at 14:02, after the first.
  const pods: KubernetesPodsObservation = {
    kind: "kubernetes-pods",
    name: "checkout",
    items: [
      {
        metadata: { name: "checkout-7d9f8c6b5-x2k4p" },
        status: {
          containerStatuses: [
            {
              name: "checkout",
              restartCount: 4,
              state: { waiting: { reason: "CrashLoopBackOff" } },
              lastState: { terminated: { reason: "OOMKilled", exitCode: 137, finishedAt: "2026-11-20T14:05:00Z" } },
            },
            { name: "envoy", restartCount: 0, state: { running: { startedAt: "2026-11-20T13:00:00Z" } } },
          ],
        },
      },
    ],
  };
  const backOff = (pod: string, container: string): KubernetesEventsObservation => ({
    kind: "kubernetes-events",
    name: "checkout",
    items: [
      k8sEvent(
        "Pod",
        pod,
        "BackOff",
        `Back-off restarting failed container ${container} in pod ${pod}_shop(5b0e6a1c-2f7d-4e8a-9c3b-1d2e3f4a5b6c)`,
        "14:02:00",
        {
          type: "Warning",
          last: "14:07:30",
          count: 9,
          fieldPath: `spec.containers{${container}}`,
        },
      ),
    ],
  });
  const latency: MetricEvidence = {
    kind: "metric",
    action: "p99 latency of checkout",
    labels: {},
    seriesCount: 1,
    value: 2.4,
    baseline: 0.4,
    low: 0.35,
    high: 0.45,
    ratio: 6,
    severity: 5,
    abnormal: true,
    onset: clock("14:03:00"),
    baselineMs: 3_600_000,
  };
  const judge = (events: KubernetesEventsObservation) =>
    judgeExecution(
      [
        { gadget: "Traffic of checkout", evidence: latency },
        ...readObservation(pods, { action: "Restarted pods of checkout", window }).map((evidence) => ({ gadget: "Changes to checkout", evidence })),
        ...readObservation(events, { action: "Events of checkout", window }).map((evidence) => ({ gadget: "Changes to checkout", evidence })),
      ],
      { time: window.time },
    ).verdict;

  it("names the OOM kill as the cause, dated when the crash loop it set off began, and the crash loop as its symptom", () => {
    const verdict = judge(backOff("checkout-7d9f8c6b5-x2k4p", "checkout"));
    expect(verdict.conclusion).toBe("cause");
    expect(verdict.cause).toEqual({
      kind: "oom",
      subject: "pod/checkout-7d9f8c6b5-x2k4p",
      detail: "OOMKilled: container checkout restarted 4 times, last exit code 137",
      action: "Restarted pods of checkout",
      onset: "2026-11-20T14:02:00.000Z",
      confidence: "high",
    });
    expect(verdict.alternative).toBeUndefined();
    expect(verdict.symptoms.map(({ kind, subject, action }) => ({ kind, subject, action }))).toEqual([
      { kind: "rise", subject: undefined, action: "p99 latency of checkout" },
      { kind: "oom", subject: "pod/checkout-7d9f8c6b5-x2k4p", action: "Restarted pods of checkout" },
      { kind: "crash-loop", subject: "pod/checkout-7d9f8c6b5-x2k4p", action: "Events of checkout" },
    ]);
  });

  it("keeps two stories apart: another container's crash loop, or another pod's", () => {
    for (const [pod, container] of [
      ["checkout-7d9f8c6b5-x2k4p", "envoy"],
      ["checkout-7d9f8c6b5-b5n2q", "checkout"],
    ] as const) {
      const verdict = judge(backOff(pod, container));
      // The crash loop began first and stands on its own: the likely cause, as without the OOM kill.
      expect(verdict.cause).toMatchObject({ kind: "crash-loop", subject: `pod/${pod}`, action: "Events of checkout" });
    }
  });
});

describe("reading the Kubernetes API's lists", () => {
  const cited = { action: "Cluster" };
  const owner = (uid: string) => [{ kind: "Deployment", name: "checkout", uid }];
  const replicaSet = (name: string, uid: string, revision: number, created: string, images: string[]): ReplicaSet => ({
    metadata: { name, creationTimestamp: created, annotations: { "deployment.kubernetes.io/revision": String(revision) }, ownerReferences: owner(uid) },
    spec: { template: { spec: { containers: images.map((image, index) => ({ name: `c${index}`, image })) } } },
  });
  const deployment = (name: string, uid: string): Deployment => ({
    metadata: { name, uid },
    spec: { template: { spec: { containers: [{ name, image: `${name}:old` }] } } },
  });

  it("names a Deployment's revisions created in the window, with their images, the latest first", () => {
    const replicaSets = [
      replicaSet("checkout-5d9", "uid-checkout", 6, "2026-11-19T10:00:00Z", ["registry.example/shop/checkout:v1.41"]),
      replicaSet("checkout-7f8", "uid-checkout", 7, "2026-11-20T14:02:00Z", ["registry.example/shop/checkout:v1.42", "envoyproxy/envoy@sha256:abc"]),
      {
        ...replicaSet("search-abc", "uid-search", 3, "2026-11-20T13:30:00Z", ["search:2.0"]),
        metadata: {
          name: "search-abc",
          creationTimestamp: "2026-11-20T13:30:00Z",
          annotations: { "deployment.kubernetes.io/revision": "3" },
          ownerReferences: [{ kind: "Deployment", name: "search", uid: "uid-search" }],
        },
      },
    ];
    const found = rolloutFindings([deployment("checkout", "uid-checkout"), deployment("search", "uid-search")], replicaSets, window, cited);
    expect(found).toEqual([
      {
        kind: "change",
        action: "Cluster",
        change: "deploy",
        subject: "checkout",
        detail: "checkout:v1.42, envoy@sha256:abc",
        at: new Date("2026-11-20T14:02:00Z"),
      },
      { kind: "change", action: "Cluster", change: "deploy", subject: "search", detail: "search:2.0", at: new Date("2026-11-20T13:30:00Z") },
    ]);
    // A ReplicaSet another Deployment owns is not this one's revision; none in an earlier window.
    expect(rolloutFindings([deployment("checkout", "uid-other")], replicaSets, window, cited)).toEqual([]);
    const earlier = { start: new Date("2026-11-20T11:00:00Z"), time: new Date("2026-11-20T12:00:00Z"), end: new Date("2026-11-20T12:15:00Z") };
    expect(
      readObservation(
        { kind: "kubernetes-rollouts", deployments: [deployment("checkout", "uid-checkout")], replicaSets },
        { action: "Cluster", window: earlier },
      ),
    ).toEqual([{ kind: "none", action: "Cluster", what: "rollouts" }]);
  });

  it("reports pods that restarted in the window, OOMKilled before CrashLoopBackOff, a failing exit as Error, dated at the termination", () => {
    const pod = (name: string, status: ContainerStatus): Pod => ({ metadata: { name }, status: { containerStatuses: [status] } });
    const pods = [
      pod("checkout-7f8-abc", {
        name: "app",
        restartCount: 3,
        state: { waiting: { reason: "CrashLoopBackOff" } },
        lastState: { terminated: { reason: "OOMKilled", exitCode: 137, finishedAt: "2026-11-20T14:06:30Z" } },
      }),
      pod("checkout-7f8-def", { name: "app", restartCount: 0, state: { running: { startedAt: "2026-11-20T14:02:10Z" } } }),
      pod("checkout-5d9-old", {
        name: "app",
        restartCount: 1,
        lastState: { terminated: { reason: "Error", exitCode: 1, finishedAt: "2026-11-19T10:00:00Z" } },
      }),
      pod("search-xyz", { name: "app", restartCount: 1, lastState: { terminated: { reason: "Error", exitCode: 2, finishedAt: "2026-11-20T13:40:00Z" } } }),
    ];
    expect(podFindings(pods, "checkout", window, cited)).toEqual([
      {
        kind: "event",
        action: "Cluster",
        subject: "pod/checkout-7f8-abc",
        reason: "OOMKilled",
        container: "app",
        message: "container app restarted 3 times, last exit code 137",
        warning: true,
        onset: new Date("2026-11-20T14:06:30Z"),
      },
    ]);
    expect(podFindings(pods, "search", window, cited)).toMatchObject([{ subject: "pod/search-xyz", reason: "Error", onset: new Date("2026-11-20T13:40:00Z") }]);
    expect(readObservation({ kind: "kubernetes-pods", items: [], name: "cart" }, { action: "Cluster", window })).toEqual([
      { kind: "none", action: "Cluster", what: "pod restarts" },
    ]);
  });

  /** A core/v1 event, last seen `at`; a recurring one (`count` > 1) began at `first`. */
  const event = (name: string, kind: string, type: string, reason: string, at: string, message: string, count = 1, first = at): KubernetesEvent => ({
    metadata: { name: `${name}.${reason}` },
    involvedObject: { kind, name },
    reason,
    message,
    type,
    count,
    firstTimestamp: first,
    lastTimestamp: at,
  });
  /** An events.k8s.io event as core/v1 shows it: first observed at `eventTime`, its series holds the last. */
  const seriesEvent = (name: string, reason: string, eventTime: string, last: string, message: string, count: number): KubernetesEvent => ({
    metadata: { name: `${name}.${reason}` },
    involvedObject: { kind: "Pod", name },
    reason,
    message,
    type: "Warning",
    eventTime,
    firstTimestamp: null,
    lastTimestamp: null,
    series: { count, lastObservedTime: last },
  });
  const events = [
    event("checkout", "Deployment", "Normal", "ScalingReplicaSet", "2026-11-20T14:02:00Z", "Scaled up replica set checkout-7f8 to 2 from 1"),
    event("checkout-7f8-abc", "Pod", "Warning", "BackOff", "2026-11-20T14:07:00Z", "Back-off restarting failed container", 4, "2026-11-20T14:03:00Z"),
    event("checkout-7f8-abc", "Pod", "Warning", "Unhealthy", "2026-11-20T14:05:00Z", "Readiness probe failed"),
    event("checkout-7f8-abc", "Pod", "Warning", "Old", "2026-11-20T10:00:00Z", "before the window"),
    event("checkoutx", "Pod", "Warning", "NotOurs", "2026-11-20T14:06:00Z", "another app whose name starts alike"),
    event("search-xyz", "Pod", "Warning", "BackOff", "2026-11-20T13:41:00Z", "Back-off restarting failed container"),
    // Recurring from before the window into it; and one that began in it, last seen after it.
    event("search-xyz", "Pod", "Warning", "Unhealthy", "2026-11-20T14:01:00Z", "Readiness probe failed", 60, "2026-11-20T11:00:00Z"),
    event("search-xyz", "Pod", "Warning", "FailedMount", "2026-11-20T15:00:00Z", "MountVolume.SetUp failed", 9, "2026-11-20T14:20:00Z"),
    seriesEvent("search-xyz", "FailedScheduling", "2026-11-20T13:50:00.123456Z", "2026-11-20T14:06:00.000000Z", "0/3 nodes are available", 5),
  ];

  it("lists the window's events of the object and those named after it, warnings first, latest first", () => {
    const found = eventFindings(events, "checkout", window, cited);
    expect(
      found.map((evidence) => (evidence.kind === "event" ? [evidence.subject, evidence.reason, evidence.warning, evidence.message] : evidence.kind)),
    ).toEqual([
      ["pod/checkout-7f8-abc", "BackOff", true, "Back-off restarting failed container (4 times)"],
      ["pod/checkout-7f8-abc", "Unhealthy", true, "Readiness probe failed"],
      ["deployment/checkout", "ScalingReplicaSet", false, "Scaled up replica set checkout-7f8 to 2 from 1"],
    ]);
    expect(readObservation({ kind: "kubernetes-events", items: [], name: "checkout" }, { action: "Cluster", window })).toEqual([
      { kind: "none", action: "Cluster", what: "warning events" },
    ]);
  });

  it("dates a recurring event when it began (firstTimestamp, else eventTime), counted, and keeps every event that happened in the window", () => {
    const onsets = (found: readonly Evidence[]) =>
      found.map((evidence) => (evidence.kind === "event" ? [evidence.reason, evidence.onset, evidence.message] : [evidence.kind]));
    expect(onsets(eventFindings(events, "checkout-7f8-abc", window, cited))[0]).toEqual([
      "BackOff",
      new Date("2026-11-20T14:03:00Z"),
      "Back-off restarting failed container (4 times)",
    ]);
    // Latest first by last occurrence: FailedMount (15:00), FailedScheduling (14:06), Unhealthy (14:01), BackOff (13:41).
    expect(onsets(eventFindings(events, "search-xyz", window, cited))).toEqual([
      ["FailedMount", new Date("2026-11-20T14:20:00Z"), "MountVolume.SetUp failed (9 times)"],
      ["FailedScheduling", new Date("2026-11-20T13:50:00.123Z"), "0/3 nodes are available (5 times)"],
      ["Unhealthy", new Date("2026-11-20T11:00:00Z"), "Readiness probe failed (60 times)"],
      ["BackOff", new Date("2026-11-20T13:41:00Z"), "Back-off restarting failed container"],
    ]);
  });
});
