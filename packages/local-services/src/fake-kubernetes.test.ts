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
    expect(await get("/api/v1/nodes")).toMatchObject({ status: 404, body: { kind: "Status" } });
  });
});
