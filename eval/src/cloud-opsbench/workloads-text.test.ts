import { describe, expect, it } from "vitest";
import { CHECKOUT_YAML, DESCRIBE_CHECKOUT_DEPLOYMENT, DESCRIBE_CHECKOUT_REPLICASET, GET_DEPLOYMENTS } from "../testing/synthetic-case.js";
import {
  deploymentRows,
  parseDeploymentDescribe,
  parseManifests,
  parseReplicaSetDescribe,
  parseStatefulSetDescribe,
  statefulSetRows,
} from "./workloads-text.js";

const now = new Date("2026-03-02T09:00:00Z");

describe("manifests", () => {
  it("keeps the template's scheduling, identity, volumes, probes, resources, ports and env, as the API writes them", () => {
    const manifests = parseManifests(CHECKOUT_YAML, "shop");
    expect(manifests.notes).toEqual([]);
    const spec = manifests.deployments[0]?.spec.template.spec;
    expect(spec?.nodeSelector).toEqual({ disktype: "ssd" });
    expect(spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms).toEqual([
      { matchExpressions: [{ key: "zone", operator: "In", values: ["1", "2"] }] },
    ]);
    expect(spec?.tolerations).toEqual([{ key: "dedicated", operator: "Equal", value: "batch", effect: "NoSchedule" }]);
    expect(spec?.serviceAccountName).toBe("checkout");
    expect(spec?.imagePullSecrets).toEqual([{ name: "registry-creds" }]);
    expect(spec?.volumes).toEqual([{ name: "cache", persistentVolumeClaim: { claimName: "checkout-cache" } }]);
    const [container] = spec?.containers ?? [];
    // Numbers in a manifest are strings in the API's quantities, labels and env values.
    expect(container?.resources).toEqual({ requests: { cpu: "250m", memory: "128Mi" }, limits: { cpu: "0.5", memory: "256Mi" } });
    expect(container?.env).toEqual([
      { name: "CART_ADDR", value: "cart:7070" },
      { name: "WORKERS", value: "4" },
    ]);
    expect(manifests.deployments[0]?.spec.template.metadata?.labels).toEqual({ app: "checkout", version: "2" });
    expect(container?.ports).toEqual([{ name: "http", containerPort: 8080 }]);
    expect(container?.livenessProbe).toEqual({ httpGet: { path: "/healthz", port: 8080 }, initialDelaySeconds: 10 });
    expect(manifests.services[0]?.spec.ports).toEqual([{ name: "http", port: 80, targetPort: "http" }]);
    expect(manifests.persistentVolumeClaims[0]?.spec?.selector).toEqual({ matchLabels: { tier: "cache" } });
  });

  it("notes a document it cannot read instead of failing", () => {
    const manifests = parseManifests("kind: Deployment\nmetadata: {name: x}\nspec: [unclosed", "shop");
    expect(manifests.deployments).toEqual([]);
    expect(manifests.notes).toHaveLength(1);
  });
});

describe("deployments and replica sets", () => {
  it("reads get deployments' READY, UP-TO-DATE and AVAILABLE into the status", () => {
    expect(deploymentRows(GET_DEPLOYMENTS, now).get("checkout")).toEqual({
      status: { replicas: 1, readyReplicas: 0, updatedReplicas: 1, availableReplicas: 0 },
      replicas: 1,
      created: "2026-03-02T08:51:00.000Z",
    });
  });

  it("reads describe deployments' counts, conditions and newest ReplicaSet", () => {
    const parsed = parseDeploymentDescribe(DESCRIBE_CHECKOUT_DEPLOYMENT, now);
    expect(parsed?.newReplicaSet).toBe("checkout-5d8f7c9b6d");
    expect(parsed?.status).toEqual({
      replicas: 2,
      updatedReplicas: 1,
      availableReplicas: 0,
      unavailableReplicas: 2,
      conditions: [
        { type: "Available", status: "False", reason: "MinimumReplicasUnavailable" },
        { type: "Progressing", status: "True", reason: "ReplicaSetUpdated" },
      ],
    });
    expect(parsed?.deployment.spec.template.spec.nodeSelector).toEqual({ disktype: "ssd" });
    expect(parsed?.deployment.spec.template.spec.containers[0]?.env).toEqual([{ name: "CART_ADDR", value: "cart:7070" }]);
  });

  it("reads a ReplicaSet's owner, counts and FailedCreate events", () => {
    const parsed = parseReplicaSetDescribe(DESCRIBE_CHECKOUT_REPLICASET, now);
    expect(parsed?.replicaSet.metadata.ownerReferences).toEqual([{ kind: "Deployment", name: "checkout" }]);
    expect(parsed?.replicaSet.spec.replicas).toBe(1);
    expect(parsed?.replicaSet.status).toEqual({ replicas: 1, readyReplicas: 0 });
    expect(parsed?.events.map((event) => event.reason)).toEqual(["FailedCreate", "SuccessfulCreate"]);
  });
});

describe("stateful sets", () => {
  it("reads describe statefulsets and get statefulsets", () => {
    const text = `Name:               db
Namespace:          shop
CreationTimestamp:  Mon, 02 Mar 2026 09:00:00 +0100
Selector:           app=db
Labels:             app=db
Annotations:        <none>
Replicas:           2 desired | 1 total
Update Strategy:    RollingUpdate
  Partition:        0
Pods Status:        1 Running / 0 Waiting / 0 Succeeded / 0 Failed
Pod Template:
  Labels:  app=db
  Containers:
   mysql:
    Image:      mysql:8
    Port:       3306/TCP
    Host Port:  0/TCP
    Environment:  <none>
    Mounts:       <none>
  Volumes:        <none>
Volume Claims:    <none>
Events:           <none>
`;
    const parsed = parseStatefulSetDescribe(text, now);
    expect(parsed?.statefulSet.spec.replicas).toBe(2);
    expect(parsed?.statefulSet.status).toEqual({ replicas: 1, readyReplicas: 1 });
    expect(parsed?.statefulSet.spec.template.spec.containers.map((container) => container.image)).toEqual(["mysql:8"]);
    expect(statefulSetRows("NAME   READY   AGE\ndb     1/2     5m\n").get("db")).toEqual({ readyReplicas: 1, replicas: 2 });
  });
});
