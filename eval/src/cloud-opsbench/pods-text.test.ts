import { describe, expect, it } from "vitest";
import { DESCRIBE_CART_POD, DESCRIBE_CHECKOUT_POD, GET_PODS_WIDE } from "../testing/synthetic-case.js";
import { parseProbe } from "./pod-spec-text.js";
import { parsePodDescribe, podsOfTable } from "./pods-text.js";

const now = new Date("2026-03-02T09:00:00Z");

describe("probes", () => {
  it("reads each kind describe prints", () => {
    expect(parseProbe("http-get https://:8443/ready delay=5s timeout=1s period=10s #success=1 #failure=3")).toEqual({
      httpGet: { scheme: "HTTPS", port: 8443, path: "/ready" },
      initialDelaySeconds: 5,
      timeoutSeconds: 1,
      periodSeconds: 10,
      successThreshold: 1,
      failureThreshold: 3,
    });
    expect(parseProbe("http-get http://:metrics/ delay=0s timeout=1s period=10s #success=1 #failure=3")?.httpGet?.port).toBe("metrics");
    expect(parseProbe("tcp-socket :6379 delay=5s timeout=1s period=10s #success=1 #failure=3")?.tcpSocket).toEqual({ port: 6379 });
    expect(parseProbe("grpc <pod>:9555  delay=5s timeout=1s period=5s #success=1 #failure=3")?.grpc).toEqual({ port: 9555 });
    expect(parseProbe("exec [cat /tmp/healthy] delay=5s timeout=1s period=5s #success=1 #failure=3")?.exec).toEqual({ command: ["cat", "/tmp/healthy"] });
    expect(parseProbe("<none>")).toBeUndefined();
  });
});

describe("describe pods", () => {
  it("reads a Pending pod's spec, its unscheduled condition and its events", () => {
    const parsed = parsePodDescribe(DESCRIBE_CHECKOUT_POD, now);
    expect(parsed?.pod.metadata).toMatchObject({
      name: "checkout-5d8f7c9b6d-x2k4p",
      namespace: "shop",
      labels: { app: "checkout" },
      ownerReferences: [{ kind: "ReplicaSet", name: "checkout-5d8f7c9b6d" }],
    });
    const spec = parsed?.pod.spec;
    expect(spec?.nodeName).toBeUndefined();
    expect(spec?.serviceAccountName).toBe("checkout");
    expect(spec?.nodeSelector).toEqual({ disktype: "ssd" });
    expect(spec?.tolerations).toEqual([
      { key: "dedicated", operator: "Equal", value: "batch", effect: "NoSchedule" },
      { key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute" },
    ]);
    expect(spec?.volumes).toEqual([{ name: "cache", persistentVolumeClaim: { claimName: "checkout-cache" } }, { name: "kube-api-access-abcde" }]);
    const [container] = spec?.containers ?? [];
    expect(container?.resources).toEqual({ limits: { cpu: "500m", memory: "256Mi" }, requests: { cpu: "250m", memory: "128Mi" } });
    expect(container?.ports).toEqual([{ containerPort: 8080, protocol: "TCP" }]);
    expect(container?.env).toEqual([
      { name: "CART_ADDR", value: "cart:7070" },
      { name: "LOG_LEVEL", valueFrom: { configMapKeyRef: { key: "level", name: "checkout-config", optional: false } } },
      { name: "API_TOKEN", valueFrom: { secretKeyRef: { key: "token", name: "checkout-secrets", optional: true } } },
    ]);
    expect(container?.livenessProbe?.httpGet).toEqual({ scheme: "HTTP", port: 8080, path: "/healthz" });
    expect(container?.volumeMounts).toContainEqual({ name: "cache", mountPath: "/data", readOnly: false });
    expect(parsed?.pod.status?.phase).toBe("Pending");
    expect(parsed?.pod.status?.conditions).toEqual([{ type: "PodScheduled", status: "False" }]);
    expect(parsed?.events).toEqual([
      expect.objectContaining({
        involvedObject: { kind: "Pod", name: "checkout-5d8f7c9b6d-x2k4p", namespace: "shop" },
        reason: "FailedScheduling",
        type: "Warning",
        count: 3,
        firstTimestamp: "2026-03-02T08:58:00.000Z",
        lastTimestamp: "2026-03-02T08:59:40.000Z",
        source: { component: "default-scheduler" },
      }),
    ]);
  });

  it("reads a running container's state, last state and restarts", () => {
    const parsed = parsePodDescribe(DESCRIBE_CART_POD, now);
    expect(parsed?.pod.spec?.nodeName).toBe("node-a");
    expect(parsed?.pod.status).toMatchObject({ hostIP: "10.0.0.11", podIP: "10.244.1.7", startTime: "2026-03-02T09:58:00+01:00" });
    expect(parsed?.pod.status?.containerStatuses).toEqual([
      {
        name: "server",
        restartCount: 1,
        ready: true,
        image: "registry.example/cart:2.0.0",
        state: { running: { startedAt: "2026-03-02T09:59:30+01:00" } },
        lastState: { terminated: { reason: "OOMKilled", exitCode: 137, startedAt: "2026-03-02T09:58:05+01:00", finishedAt: "2026-03-02T09:59:28+01:00" } },
      },
    ]);
    expect(parsed?.pod.spec?.tolerations).toEqual([{ operator: "Exists" }]);
    expect(parsed?.pod.spec?.containers[0]?.readinessProbe?.exec).toEqual({ command: ["cat", "/tmp/ready"] });
  });
});

describe("get pods", () => {
  it("reads rows as pods, the status column as the waiting reason of a container not ready", () => {
    const pods = podsOfTable(GET_PODS_WIDE, "shop", now);
    expect(pods.map((pod) => [pod.metadata.name, pod.status?.phase, pod.spec?.nodeName])).toEqual([
      ["cart-7c9d8b6f5a-q8w2e", "Running", "node-a"],
      ["checkout-5d8f7c9b6d-x2k4p", "Pending", undefined],
      ["checkout-6b7c8d9e0f-old99", "Running", "node-a"],
    ]);
    expect(pods[0]?.status?.containerStatuses?.[0]).toEqual({ name: "container-0", restartCount: 1, ready: true });
    expect(pods[2]?.status?.containerStatuses?.[0]).toEqual({
      name: "container-0",
      restartCount: 4,
      ready: false,
      state: { waiting: { reason: "CrashLoopBackOff" } },
    });
    expect(pods[1]?.metadata.creationTimestamp).toBe("2026-03-02T08:57:55.000Z");
  });
});
