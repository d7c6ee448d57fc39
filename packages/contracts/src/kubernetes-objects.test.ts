import { describe, expect, it } from "vitest";
import { Deployment, ReplicaSet, StatefulSet } from "./kubernetes-objects.js";

// Objects as the API server writes them: a template's metadata carries `creationTimestamp: null`.
const template = { metadata: { creationTimestamp: null, labels: { app: "checkout" } }, spec: { containers: [{ name: "app", image: "checkout:v1" }] } };
const metadata = { name: "checkout", namespace: "shop", creationTimestamp: "2026-11-20T14:02:00Z", managedFields: [{ manager: "kube-controller-manager" }] };

describe("Kubernetes objects as the API server writes them", () => {
  it("reads workloads whose templates have a null creation time, and drops the fields it does not read", () => {
    expect(Deployment.parse({ metadata, spec: { replicas: 2, template } })).toEqual({
      metadata: { name: "checkout", namespace: "shop", creationTimestamp: "2026-11-20T14:02:00Z" },
      spec: { replicas: 2, template: { metadata: { labels: { app: "checkout" } }, spec: { containers: [{ name: "app", image: "checkout:v1" }] } } },
    });
    expect(ReplicaSet.safeParse({ metadata, spec: { template } }).success).toBe(true);
    const claim = { metadata: { name: "data", creationTimestamp: null }, spec: { accessModes: ["ReadWriteOnce"] }, status: { phase: "Pending" } };
    const statefulSet = StatefulSet.parse({ metadata, spec: { template, volumeClaimTemplates: [claim] } });
    expect(statefulSet.spec.volumeClaimTemplates).toEqual([
      { metadata: { name: "data" }, spec: { accessModes: ["ReadWriteOnce"] }, status: { phase: "Pending" } },
    ]);
  });
});
