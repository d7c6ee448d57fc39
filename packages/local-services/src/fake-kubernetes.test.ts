import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeKubernetes } from "./fake-kubernetes.js";
import type { TestHttpServer } from "./test-http-server.js";

const pod = (name: string, namespace: string, labels: Record<string, string>) => ({ metadata: { name, namespace, labels }, status: { phase: "Running" } });

describe("startFakeKubernetes", () => {
  let server: TestHttpServer;
  beforeAll(async () => {
    server = await startFakeKubernetes(
      {
        pods: [pod("a", "shop", { app: "checkout", tier: "web" }), pod("b", "shop", { app: "search" }), pod("c", "other", { app: "checkout" })],
        events: [{ metadata: { name: "e1", namespace: "shop" }, involvedObject: { kind: "Pod", name: "a" }, type: "Warning" }],
      },
      { token: "t" },
    );
  });
  afterAll(async () => {
    await server?.close();
  });

  const get = async (path: string, token = "t") => {
    const response = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
    return { status: response.status, body: (await response.json()) as { kind: string; items?: Array<{ metadata: { name: string } }>; message?: string } };
  };
  const names = async (path: string) => (await get(path)).body.items?.map((item) => item.metadata.name);

  it("lists a namespace's objects as a List, filtered by label selector", async () => {
    expect((await get("/api/v1/namespaces/shop/pods")).body.kind).toBe("PodList");
    expect(await names("/api/v1/namespaces/shop/pods")).toEqual(["a", "b"]);
    expect(await names(`/api/v1/namespaces/shop/pods?labelSelector=${encodeURIComponent("app=checkout")}`)).toEqual(["a"]);
    expect(await names(`/api/v1/namespaces/shop/pods?labelSelector=${encodeURIComponent("app!=checkout")}`)).toEqual(["b"]);
    expect(await names(`/api/v1/namespaces/shop/pods?labelSelector=${encodeURIComponent("app in (checkout, search),!tier")}`)).toEqual(["b"]);
    expect(await names(`/api/v1/namespaces/shop/pods?labelSelector=${encodeURIComponent("tier")}`)).toEqual(["a"]);
    expect(await names(`/api/v1/namespaces/shop/pods?labelSelector=${encodeURIComponent("app notin (search)")}`)).toEqual(["a"]);
    expect(await names("/api/v1/namespaces/nowhere/pods")).toEqual([]);
  });

  it("filters by field selector", async () => {
    expect(await names(`/api/v1/namespaces/shop/events?fieldSelector=${encodeURIComponent("involvedObject.name=a,type=Warning")}`)).toEqual(["e1"]);
    expect(await names(`/api/v1/namespaces/shop/events?fieldSelector=${encodeURIComponent("involvedObject.name=b")}`)).toEqual([]);
  });

  it("answers errors as Status objects", async () => {
    expect(await get("/api/v1/namespaces/shop/pods", "wrong")).toMatchObject({ status: 401, body: { kind: "Status", message: "Unauthorized" } });
    expect(await get(`/api/v1/namespaces/shop/pods?labelSelector=${encodeURIComponent("app=a b")}`)).toMatchObject({ status: 400, body: { kind: "Status" } });
    expect(await get("/apis/apps/v1/namespaces/shop/deployments/nope")).toMatchObject({ status: 404, body: { message: 'deployments.apps "nope" not found' } });
    expect(await get("/api/v1/namespaces/shop/nodes")).toMatchObject({ status: 404, body: { kind: "Status" } });
    expect(await get("/apis/batch/v1/namespaces/shop/jobs")).toMatchObject({ status: 404, body: { kind: "Status" } });
  });
});

describe("startFakeKubernetes: the state of a namespace and of the cluster", () => {
  let server: TestHttpServer;
  let denying: TestHttpServer;
  let oldServer: TestHttpServer;
  const objects = {
    pods: [pod("a", "shop", {}), pod("b", "shop", {}), pod("c", "shop", {}), pod("etcd-node-1", "kube-system", { component: "etcd" })],
    secrets: [{ metadata: { name: "db-creds", namespace: "shop" }, type: "Opaque", data: { password: "c2VjcmV0" } }],
    nodes: [{ metadata: { name: "node-1" }, spec: { unschedulable: true } }],
    storageClasses: [{ metadata: { name: "standard" }, provisioner: "kubernetes.io/no-provisioner" }],
    endpointSlices: [{ metadata: { name: "web-x1", namespace: "shop", labels: { "kubernetes.io/service-name": "web" } }, endpoints: [] }],
    logs: [{ namespace: "shop", pod: "a", container: "app", lines: ["one", "two", "three"], previous: ["panic: boom"] }],
  };
  beforeAll(async () => {
    server = await startFakeKubernetes(objects);
    denying = await startFakeKubernetes(objects, { forbidden: ["secrets", "nodes", "pods/log"] });
    oldServer = await startFakeKubernetes(objects, { metadataOnly: false });
  });
  afterAll(async () => {
    await Promise.all([server?.close(), denying?.close(), oldServer?.close()]);
  });

  const read = async (base: TestHttpServer, path: string, accept = "application/json") => {
    const response = await fetch(`${base.url}${path}`, { headers: { accept } });
    const type = response.headers.get("content-type");
    return {
      status: response.status,
      type,
      body: type?.startsWith("application/json") ? ((await response.json()) as Record<string, unknown>) : await response.text(),
    };
  };
  const METADATA = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";

  it("serves cluster-scoped lists, other API groups and kube-system", async () => {
    expect(await read(server, "/api/v1/nodes")).toMatchObject({ status: 200, body: { kind: "NodeList", items: [{ metadata: { name: "node-1" } }] } });
    expect(await read(server, "/apis/storage.k8s.io/v1/storageclasses")).toMatchObject({ body: { kind: "StorageClassList", apiVersion: "storage.k8s.io/v1" } });
    const slices = await read(
      server,
      `/apis/discovery.k8s.io/v1/namespaces/shop/endpointslices?labelSelector=${encodeURIComponent("kubernetes.io/service-name=web")}`,
    );
    expect(slices).toMatchObject({ body: { kind: "EndpointSliceList", items: [{ metadata: { name: "web-x1" } }] } });
    expect(await read(server, "/api/v1/namespaces/kube-system/pods")).toMatchObject({ body: { items: [{ metadata: { name: "etcd-node-1" } }] } });
  });

  it("honours limit, and says more are left as the API server does", async () => {
    expect(await read(server, "/api/v1/namespaces/shop/pods?limit=2")).toMatchObject({
      body: { items: [{ metadata: { name: "a" } }, { metadata: { name: "b" } }], metadata: { continue: expect.any(String), remainingItemCount: 1 } },
    });
    const all = await read(server, "/api/v1/namespaces/shop/pods?limit=3");
    expect(all.body).toMatchObject({ items: [{}, {}, {}], metadata: { resourceVersion: "1" } });
    expect((all.body as { metadata: Record<string, unknown> }).metadata.continue).toBeUndefined();
  });

  it("serves metadata only when the Accept header asks for PartialObjectMetadataList, and the full list otherwise", async () => {
    const partial = await read(server, "/api/v1/namespaces/shop/secrets", METADATA);
    expect(partial.type).toBe("application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1");
    expect(partial.body).toEqual({
      kind: "PartialObjectMetadataList",
      apiVersion: "meta.k8s.io/v1",
      metadata: { resourceVersion: "1" },
      items: [{ kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: { name: "db-creds", namespace: "shop" } }],
    });
    expect(JSON.stringify((await read(server, "/api/v1/namespaces/shop/secrets")).body)).toContain("c2VjcmV0");
    expect(JSON.stringify((await read(oldServer, "/api/v1/namespaces/shop/secrets", METADATA)).body)).toContain("c2VjcmV0");
  });

  it("answers 403 for what the test forbids, as RBAC does", async () => {
    expect(await read(denying, "/api/v1/namespaces/shop/secrets", METADATA)).toMatchObject({
      status: 403,
      body: { kind: "Status", reason: "Forbidden", message: expect.stringContaining('cannot list resource "secrets" in API group "" in the namespace "shop"') },
    });
    expect(await read(denying, "/api/v1/nodes")).toMatchObject({ status: 403, body: { message: expect.stringContaining("at the cluster scope") } });
    expect(await read(denying, "/api/v1/namespaces/shop/pods/a/log?container=app")).toMatchObject({ status: 403 });
    expect(await read(denying, "/api/v1/namespaces/shop/pods")).toMatchObject({ status: 200 });
  });

  it("serves a container's last lines, of its previous run when asked", async () => {
    expect(await read(server, "/api/v1/namespaces/shop/pods/a/log?container=app&tailLines=2")).toEqual({
      status: 200,
      type: "text/plain",
      body: "two\nthree\n",
    });
    expect(await read(server, "/api/v1/namespaces/shop/pods/a/log?container=app&previous=true")).toMatchObject({ body: "panic: boom\n" });
    expect(await read(server, "/api/v1/namespaces/shop/pods/b/log?container=app")).toMatchObject({ status: 400, body: { kind: "Status" } });
    expect(await read(server, "/api/v1/namespaces/shop/pods/nope/log?container=app")).toMatchObject({ status: 404 });
  });
});
