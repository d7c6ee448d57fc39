import { describe, expect, it } from "vitest";
import type { Pod } from "@pes/contracts";
import { DESCRIBE_CART_ENDPOINTS, DESCRIBE_CART_SERVICE } from "../testing/synthetic-case.js";
import { parseEndpointsDescribe, parseServiceDescribe, sliceOfDescribedService } from "./services-text.js";

const now = new Date("2026-03-02T09:00:00Z");
const pods: Pod[] = [{ metadata: { name: "cart-1" }, spec: { containers: [], nodeName: "node-a" }, status: { podIP: "10.244.1.7" } }];

describe("describe services", () => {
  it("reads each port with its target port, protocol and endpoints", () => {
    const parsed = parseServiceDescribe(DESCRIBE_CART_SERVICE, now);
    expect(parsed?.service).toEqual({
      metadata: { name: "cart", namespace: "shop", labels: { app: "cart" } },
      spec: {
        type: "ClusterIP",
        selector: { app: "cart" },
        ports: [
          { name: "grpc", port: 7070, targetPort: 7071, protocol: "TCP" },
          { port: 9090, targetPort: "metrics", protocol: "UDP" },
        ],
        clusterIP: "10.96.0.20",
      },
    });
    expect(parsed?.endpoints).toEqual([["10.244.1.7:7071"], []]);
  });

  it("makes an EndpointSlice of the Endpoints lines when the endpoints were not described", () => {
    const parsed = parseServiceDescribe(DESCRIBE_CART_SERVICE, now);
    if (parsed === undefined) throw new Error("unread");
    expect(sliceOfDescribedService(parsed, pods)).toEqual({
      metadata: { name: "cart", namespace: "shop", labels: { "kubernetes.io/service-name": "cart" } },
      ports: [{ port: 7071, protocol: "TCP" }],
      endpoints: [{ addresses: ["10.244.1.7"], conditions: { ready: true, serving: true }, nodeName: "node-a", targetRef: { kind: "Pod", name: "cart-1" } }],
    });
  });
});

describe("describe endpoints", () => {
  it("reads ready and not-ready addresses and the ports table", () => {
    expect(parseEndpointsDescribe(DESCRIBE_CART_ENDPOINTS, pods)).toEqual({
      metadata: { name: "cart", namespace: "shop", labels: { "kubernetes.io/service-name": "cart" } },
      ports: [{ name: "grpc", port: 7071, protocol: "TCP" }],
      endpoints: [
        { addresses: ["10.244.1.7"], conditions: { ready: true, serving: true }, nodeName: "node-a", targetRef: { kind: "Pod", name: "cart-1" } },
        { addresses: ["10.244.1.9"], conditions: { ready: false, serving: false } },
      ],
    });
  });
});
