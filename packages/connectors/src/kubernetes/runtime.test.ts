// The kubernetes connector against a local API server speaking the Kubernetes API's JSON (List objects,
// Status errors, label selectors), with objects in the window, before it, and in another namespace. What
// the lists say (a revision in the window, a pod that restarted, warnings first) is the analysis'
// (kubernetes-reading.test.ts).
import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Observation } from "@pes/contracts";
import { sendJson, startFakeKubernetes, startTestHttpServer, type KubernetesObject, type TestHttpServer } from "@pes/local-services";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ActionRequest, TimeWindow } from "../connector.js";
import { resolveSecrets } from "../data-source-secrets.js";
import { runConnectorAction, type Observed } from "../run-action.js";
import { redactedObservation } from "../testing/redacted-observation.js";
import { connectDataSource, createHttpClient } from "../undici-http-client.js";
import { kubernetesRuntime } from "./runtime.js";
import { kubernetesConnector } from "./definition.js";
import { KubernetesAction, KubernetesDataSource } from "./schema.js";

/** Runs an action as the worker does: namespace, name and selector filled and checked, then the fetch. */
const observe = (request: ActionRequest<KubernetesDataSource, KubernetesAction>): Promise<Observed> =>
  runConnectorAction(kubernetesConnector.definition, kubernetesRuntime, request);
/** What the action observed. */
const runKubernetesAction = async (request: ActionRequest<KubernetesDataSource, KubernetesAction>): Promise<Observation> =>
  (await observe(request)).observation;

const window: TimeWindow = { start: new Date("2026-11-20T13:08:00Z"), time: new Date("2026-11-20T14:08:00Z"), end: new Date("2026-11-20T14:23:00Z") };
const TOKEN = "k8s-token-0123456789";
/** Values built to change a path, a selector or a query string. */
const HOSTILE = ["shop/../kube-system", "..", "shop,app=x", 'a"b', "a\nb", "a b", "*", "{x}", "a|b", "a=b", "a\\b", "-shop"];

const deployment = (namespace: string, name: string, uid: string): KubernetesObject => ({
  metadata: { name, namespace, uid, labels: { app: name } },
  spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name, image: `${name}:old` }] } } },
});
const replicaSet = (namespace: string, name: string, owner: string, uid: string, revision: number, created: string, images: string[]): KubernetesObject => ({
  metadata: {
    name,
    namespace,
    labels: { app: owner, "pod-template-hash": name.split("-").at(-1) ?? "" },
    annotations: { "deployment.kubernetes.io/revision": String(revision) },
    ownerReferences: [{ apiVersion: "apps/v1", kind: "Deployment", name: owner, uid, controller: true }],
    creationTimestamp: created,
  },
  spec: { template: { spec: { containers: images.map((image, index) => ({ name: `c${index}`, image })) } } },
});
const pod = (name: string, app: string, statuses: unknown[]): KubernetesObject => ({
  metadata: { name, namespace: "shop", labels: { app } },
  status: { phase: "Running", containerStatuses: statuses },
});
/** A core/v1 event, last seen `at`; a recurring one (`count` > 1) began at `first`. */
const event = (name: string, kind: string, type: string, reason: string, at: string, message: string, count = 1, first = at): KubernetesObject => ({
  metadata: { name: `${name}.${reason}`, namespace: "shop" },
  involvedObject: { kind, name, namespace: "shop" },
  reason,
  message,
  type,
  count,
  firstTimestamp: first,
  lastTimestamp: at,
});
/** An events.k8s.io event as core/v1 shows it: first observed at `eventTime`, its series holds the last. */
const seriesEvent = (name: string, reason: string, eventTime: string, last: string, message: string, count: number): KubernetesObject => ({
  metadata: { name: `${name}.${reason}`, namespace: "shop" },
  involvedObject: { kind: "Pod", name, namespace: "shop" },
  reason,
  message,
  type: "Warning",
  eventTime,
  firstTimestamp: null,
  lastTimestamp: null,
  series: { count, lastObservedTime: last },
});

const objects = {
  deployments: [
    deployment("shop", "checkout", "uid-checkout"),
    deployment("shop", "search", "uid-search"),
    deployment("other", "checkout", "uid-other-checkout"),
  ],
  replicaSets: [
    replicaSet("shop", "checkout-5d9", "checkout", "uid-checkout", 6, "2026-11-19T10:00:00Z", ["registry.example/shop/checkout:v1.41"]),
    replicaSet("shop", "checkout-7f8", "checkout", "uid-checkout", 7, "2026-11-20T14:02:00Z", [
      "registry.example/shop/checkout:v1.42",
      "envoyproxy/envoy@sha256:abc",
    ]),
    replicaSet("shop", "search-abc", "search", "uid-search", 3, "2026-11-20T13:30:00Z", ["search:2.0"]),
    replicaSet("other", "checkout-999", "checkout", "uid-other-checkout", 9, "2026-11-20T14:05:00Z", ["checkout:other"]),
  ],
  pods: [
    pod("checkout-7f8-abc", "checkout", [
      {
        name: "app",
        restartCount: 3,
        state: { waiting: { reason: "CrashLoopBackOff" } },
        lastState: { terminated: { reason: "OOMKilled", exitCode: 137, finishedAt: "2026-11-20T14:06:30Z" } },
      },
    ]),
    pod("checkout-7f8-def", "checkout", [{ name: "app", restartCount: 0, state: { running: { startedAt: "2026-11-20T14:02:10Z" } } }]),
    pod("checkout-5d9-old", "checkout", [
      { name: "app", restartCount: 1, lastState: { terminated: { reason: "Error", exitCode: 1, finishedAt: "2026-11-19T10:00:00Z" } } },
    ]),
    pod("search-xyz", "search", [
      { name: "app", restartCount: 1, lastState: { terminated: { reason: "Error", exitCode: 2, finishedAt: "2026-11-20T13:40:00Z" } } },
    ]),
  ],
  events: [
    event("checkout", "Deployment", "Normal", "ScalingReplicaSet", "2026-11-20T14:02:00Z", "Scaled up replica set checkout-7f8 to 1"),
    event("checkout-7f8-abc", "Pod", "Warning", "BackOff", "2026-11-20T14:07:00Z", "Back-off restarting failed container", 4, "2026-11-20T14:03:00Z"),
    event("checkout-7f8-abc", "Pod", "Warning", "Unhealthy", "2026-11-20T14:05:00Z", "Readiness probe failed"),
    event("checkout-7f8-abc", "Pod", "Warning", "Old", "2026-11-20T10:00:00Z", "before the window"),
    event("checkoutx", "Pod", "Warning", "NotOurs", "2026-11-20T14:06:00Z", "another app whose name starts alike"),
    event("search-xyz", "Pod", "Warning", "BackOff", "2026-11-20T13:41:00Z", "Back-off restarting failed container"),
    // Recurring from before the window into it; and one that began in it, last seen after it.
    event("search-xyz", "Pod", "Warning", "Unhealthy", "2026-11-20T14:01:00Z", "Readiness probe failed", 60, "2026-11-20T11:00:00Z"),
    event("search-xyz", "Pod", "Warning", "FailedMount", "2026-11-20T15:00:00Z", "MountVolume.SetUp failed", 9, "2026-11-20T14:20:00Z"),
    seriesEvent("search-xyz", "FailedScheduling", "2026-11-20T13:50:00.123456Z", "2026-11-20T14:06:00.000000Z", "0/3 nodes are available", 5),
  ],
};

const env: Record<string, string> = { PES_TEST_K8S_TOKEN: TOKEN };
const http = createHttpClient();
let cluster: TestHttpServer;
beforeAll(async () => {
  cluster = await startFakeKubernetes(objects, { token: TOKEN });
});
afterAll(async () => {
  await cluster?.close();
  await http.close();
});

function request(
  action: unknown,
  attributes: Record<string, string> = {},
  overrides: Partial<ActionRequest<KubernetesDataSource, KubernetesAction>> = {},
  url = cluster.url,
) {
  const dataSource = KubernetesDataSource.parse({ type: "kubernetes", url, auth: { bearerToken: { env: "PES_TEST_K8S_TOKEN" } } });
  return {
    title: "Cluster",
    dataSource,
    secrets: resolveSecrets(dataSource, { env }).secrets,
    http,
    spec: KubernetesAction.parse(action),
    attributes,
    window,
    signal: AbortSignal.timeout(10_000),
    ...overrides,
  };
}

const sent = (from: number) => cluster.requests.slice(from).map((seen) => decodeURIComponent(seen.url));
/** The names of the objects a list holds (`metadata.name`), by what the observation holds. */
const names = (observation: Observation): Record<string, string[]> => {
  const of = (items: ReadonlyArray<{ metadata: { name: string } }>) => items.map(({ metadata }) => metadata.name);
  switch (observation.kind) {
    case "kubernetes-rollouts":
      return { deployments: of(observation.deployments), replicaSets: of(observation.replicaSets) };
    case "kubernetes-pods":
    case "kubernetes-events":
      return { items: of(observation.items) };
    default:
      return { [observation.kind]: [] };
  }
};

describe("kubernetes rollouts", () => {
  it("reads one Deployment and its own ReplicaSets (by its selector's labels), with the token", async () => {
    const before = cluster.requests.length;
    const observed = await observe(
      request({ namespace: "{{namespace}}", resource: "rollouts", name: "{{service}}" }, { namespace: "shop", service: "checkout" }),
    );
    expect(names(observed.observation)).toEqual({ deployments: ["checkout"], replicaSets: ["checkout-5d9", "checkout-7f8"] });
    // What the analysis reads of a revision: when it was created, its number, its owner and its images.
    const revision = observed.observation.kind === "kubernetes-rollouts" ? observed.observation.replicaSets[1] : undefined;
    expect(revision).toEqual({
      metadata: {
        name: "checkout-7f8",
        namespace: "shop",
        labels: { app: "checkout", "pod-template-hash": "7f8" },
        annotations: { "deployment.kubernetes.io/revision": "7" },
        ownerReferences: [{ kind: "Deployment", name: "checkout", uid: "uid-checkout" }],
        creationTimestamp: "2026-11-20T14:02:00Z",
      },
      spec: {
        template: {
          spec: {
            containers: [
              { name: "c0", image: "registry.example/shop/checkout:v1.42" },
              { name: "c1", image: "envoyproxy/envoy@sha256:abc" },
            ],
          },
        },
      },
    });
    expect(observed.link).toBe(`${cluster.url}/apis/apps/v1/namespaces/shop/deployments/checkout`);
    expect(sent(before)).toEqual([
      "/apis/apps/v1/namespaces/shop/deployments/checkout",
      "/apis/apps/v1/namespaces/shop/replicasets?labelSelector=app=checkout",
    ]);
    expect(cluster.requests.slice(before).every((seen) => seen.headers.authorization === `Bearer ${TOKEN}`)).toBe(true);
  });

  it("reads every Deployment of the namespace by label, or all of them, with the namespace's ReplicaSets, never another namespace's", async () => {
    const before = cluster.requests.length;
    expect(
      names(await runKubernetesAction(request({ namespace: "shop", resource: "rollouts", selector: { app: "{{service}}" } }, { service: "search" }))),
    ).toEqual({
      deployments: ["search"],
      replicaSets: ["search-abc"],
    });
    expect(names(await runKubernetesAction(request({ namespace: "shop", resource: "rollouts" })))).toEqual({
      deployments: ["checkout", "search"],
      replicaSets: ["checkout-5d9", "checkout-7f8", "search-abc"],
    });
    expect(sent(before)).toEqual([
      "/apis/apps/v1/namespaces/shop/deployments?labelSelector=app=search",
      "/apis/apps/v1/namespaces/shop/replicasets?labelSelector=app=search",
      "/apis/apps/v1/namespaces/shop/deployments",
      "/apis/apps/v1/namespaces/shop/replicasets",
    ]);
  });

  it("answers none when no Deployment matches, asking nothing more", async () => {
    const before = cluster.requests.length;
    expect(await runKubernetesAction(request({ namespace: "shop", resource: "rollouts", selector: { app: "cart" } }))).toEqual({
      kind: "kubernetes-rollouts",
      deployments: [],
      replicaSets: [],
    });
    expect(sent(before)).toEqual(["/apis/apps/v1/namespaces/shop/deployments?labelSelector=app=cart"]);
  });

  it("fails with the API server's words for a Deployment that does not exist", async () => {
    expect(await runKubernetesAction(request({ namespace: "shop", resource: "rollouts", name: "nope" }))).toEqual({
      kind: "failed",
      reason: 'Kubernetes answered 404 Not Found: deployments.apps "nope" not found',
    });
  });
});

describe("kubernetes pods", () => {
  it("reads the namespace's pods with their container statuses, and the name the action narrows them to", async () => {
    const before = cluster.requests.length;
    const observed = await observe(request({ namespace: "shop", resource: "pods", name: "{{service}}" }, { service: "checkout" }));
    expect(names(observed.observation)).toEqual({ items: ["checkout-7f8-abc", "checkout-7f8-def", "checkout-5d9-old", "search-xyz"] });
    expect(observed.observation).toMatchObject({ kind: "kubernetes-pods", name: "checkout" });
    const [first] = observed.observation.kind === "kubernetes-pods" ? observed.observation.items : [];
    expect(first?.status?.containerStatuses).toEqual([
      {
        name: "app",
        restartCount: 3,
        state: { waiting: { reason: "CrashLoopBackOff" } },
        lastState: { terminated: { reason: "OOMKilled", exitCode: 137, finishedAt: "2026-11-20T14:06:30Z" } },
      },
    ]);
    expect(observed.link).toBe(`${cluster.url}/api/v1/namespaces/shop/pods`);
    expect(sent(before)).toEqual(["/api/v1/namespaces/shop/pods"]);
  });

  it("selects by label on the server", async () => {
    const before = cluster.requests.length;
    expect(names(await runKubernetesAction(request({ namespace: "shop", resource: "pods", selector: { app: "search" } })))).toEqual({ items: ["search-xyz"] });
    expect(sent(before)).toEqual(["/api/v1/namespaces/shop/pods?labelSelector=app=search"]);
  });

  it("reads an empty list in a namespace without pods", async () => {
    expect(await runKubernetesAction(request({ namespace: "other", resource: "pods" }))).toEqual({ kind: "kubernetes-pods", items: [] });
  });
});

describe("kubernetes events", () => {
  it("reads the namespace's events, the core fields and the events.k8s.io ones as core/v1 shows them", async () => {
    const observed = await runKubernetesAction(request({ namespace: "shop", resource: "events", name: "checkout" }));
    expect(observed).toMatchObject({ kind: "kubernetes-events", name: "checkout" });
    expect(names(observed).items).toHaveLength(objects.events.length);
    expect(observed.kind === "kubernetes-events" ? observed.items.find(({ reason }) => reason === "FailedScheduling") : undefined).toEqual({
      metadata: { name: "search-xyz.FailedScheduling", namespace: "shop" },
      involvedObject: { kind: "Pod", name: "search-xyz", namespace: "shop" },
      reason: "FailedScheduling",
      message: "0/3 nodes are available",
      type: "Warning",
      eventTime: "2026-11-20T13:50:00.123456Z",
      firstTimestamp: null,
      lastTimestamp: null,
      series: { count: 5, lastObservedTime: "2026-11-20T14:06:00.000000Z" },
    });
  });

  it("reads an empty list in a namespace where nothing happened", async () => {
    expect(await runKubernetesAction(request({ namespace: "other", resource: "events" }))).toEqual({ kind: "kubernetes-events", items: [] });
  });
});

describe("kubernetes values that would change the request", () => {
  it.each(HOSTILE)("refuses %j as a namespace, a name or a label value, sending nothing", async (value) => {
    const before = cluster.requests.length;
    const actions = [
      { namespace: "{{value}}", resource: "pods" },
      { namespace: "shop", resource: "rollouts", name: "{{value}}" },
      { namespace: "shop", resource: "pods", selector: { app: "{{value}}" } },
    ];
    for (const action of actions) {
      expect(await runKubernetesAction(request(action, { value }))).toEqual({
        kind: "failed",
        reason: expect.stringMatching(/^could not build the request: .* is not a Kubernetes (namespace|object name|label value) \(/),
      });
    }
    expect(cluster.requests).toHaveLength(before);
  });

  it("accepts label values that a name could not be, URL-encoded on the wire", async () => {
    expect(await runKubernetesAction(request({ namespace: "{{value}}", resource: "pods" }, { value: "Shop" }))).toMatchObject({ kind: "failed" });
    const before = cluster.requests.length;
    await runKubernetesAction(request({ namespace: "shop", resource: "pods", selector: { "app.kubernetes.io/name": "Checkout_v1.2" } }));
    expect(cluster.requests[before]?.url).toBe("/api/v1/namespaces/shop/pods?labelSelector=app.kubernetes.io%2Fname%3DCheckout_v1.2");
  });

  it("refuses at load a literal that is not a name, a label key that is not one, and a selector for events", () => {
    const problems = (action: unknown) => KubernetesAction.safeParse(action).error?.issues.map((issue) => issue.path.join(".")) ?? [];
    expect(problems({ namespace: "Shop", resource: "pods" })).toEqual(["namespace"]);
    expect(problems({ namespace: "shop", resource: "pods", selector: { "a,b": "x" } })).toEqual(["selector.a,b"]);
    expect(problems({ namespace: "shop", resource: "events", selector: { app: "x" } })).toEqual(["selector"]);
    expect(problems({ namespace: "{{namespace}}", resource: "pods", name: "{{service}}", selector: { app: "{{service}}" } })).toEqual([]);
  });
});

describe("kubernetes failures", () => {
  let server: TestHttpServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it("reads the API server's Status, and keeps a token it echoes out", async () => {
    server = await startTestHttpServer((seen, response) =>
      sendJson(response, 403, {
        kind: "Status",
        apiVersion: "v1",
        status: "Failure",
        message: `pods is forbidden: User "system:serviceaccount:pes:reader" cannot list resource "pods" in API group "" in the namespace "shop" (${seen.headers.authorization ?? ""})`,
        reason: "Forbidden",
        code: 403,
      }),
    );
    const observed = await observe(request({ namespace: "shop", resource: "pods" }, {}, {}, server.url));
    const failed = redactedObservation(observed);
    expect(failed).toEqual({
      kind: "failed",
      reason: expect.stringMatching(
        /^Kubernetes answered 403 Forbidden: pods is forbidden: User "system:serviceaccount:pes:reader" cannot list .*\(Bearer \[redacted\]\)$/,
      ),
    });
    expect(JSON.stringify(failed)).not.toContain(TOKEN);
  });

  it("says the token was refused", async () => {
    const refusing = await startFakeKubernetes(objects, { token: "another-token" });
    try {
      expect(await runKubernetesAction(request({ namespace: "shop", resource: "events" }, {}, {}, refusing.url))).toEqual({
        kind: "failed",
        reason: "Kubernetes answered 401 Unauthorized: Unauthorized",
      });
    } finally {
      await refusing.close();
    }
  });

  it("fails with 'timed out' when the deadline passes first", async () => {
    server = await startTestHttpServer(() => {
      // never answers
    });
    expect(await runKubernetesAction(request({ namespace: "shop", resource: "pods" }, {}, { signal: AbortSignal.timeout(100) }, server.url))).toEqual({
      kind: "failed",
      reason: "no answer from Kubernetes before the deadline (timed out)",
    });
  });

  it("fails on an answer that is not the API's", async () => {
    server = await startTestHttpServer((_seen, response) => sendJson(response, 200, { items: [{ name: "not an object" }] }));
    expect(await runKubernetesAction(request({ namespace: "shop", resource: "pods" }, {}, {}, server.url))).toEqual({
      kind: "failed",
      reason: "Kubernetes answered in a shape this connector does not know",
    });
  });
});

describe("kubernetes over TLS with the cluster's CA", () => {
  it("reaches an API server whose certificate the data source's CA signed, with the token", async () => {
    const dir = await mkdtemp(join(tmpdir(), "pes-k8s-ca-"));
    const openssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
    const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
    openssl("req", "-x509", ...ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "1", "-subj", "/CN=kubernetes-ca");
    openssl("req", ...ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=kube-apiserver");
    await writeFile(join(dir, "server.ext"), "subjectAltName=IP:127.0.0.1\n");
    openssl(
      "x509",
      "-req",
      "-in",
      "server.csr",
      "-CA",
      "ca.pem",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-out",
      "server.pem",
      "-days",
      "1",
      "-extfile",
      "server.ext",
    );
    const apiServer = await startFakeKubernetes(objects, {
      token: TOKEN,
      https: { key: await readFile(join(dir, "server.key")), cert: await readFile(join(dir, "server.pem")) },
    });
    const dataSource = KubernetesDataSource.parse({
      type: "kubernetes",
      url: apiServer.url,
      tls: { ca: { file: join(dir, "ca.pem") } },
      auth: { bearerToken: { env: "PES_TEST_K8S_TOKEN" } },
    });
    const connection = connectDataSource(dataSource, resolveSecrets(dataSource, { env }).secrets);
    try {
      const spec = KubernetesAction.parse({ namespace: "shop", resource: "pods", name: "checkout" });
      const found = await runKubernetesAction({
        title: "Cluster",
        dataSource,
        spec,
        attributes: {},
        window,
        signal: AbortSignal.timeout(10_000),
        ...connection,
      });
      expect(names(found)).toEqual({ items: ["checkout-7f8-abc", "checkout-7f8-def", "checkout-5d9-old", "search-xyz"] });
    } finally {
      await connection.http.close();
      await apiServer.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
