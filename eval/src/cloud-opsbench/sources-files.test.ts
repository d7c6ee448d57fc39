import { describe, expect, it } from "vitest";
import { ALERTS, CONTAINERD_RUNNING, KUBELET_STOPPED, METRICS_CSV } from "../testing/synthetic-case.js";
import { alertsObservation } from "./alerts-file.js";
import { metricObservation, readMetricsCsv } from "./metrics-file.js";
import { nodeServicePod } from "./node-services-text.js";

describe("node services", () => {
  it("stands a stopped service for a failed kube-system pod on its node, with its journal as log", () => {
    const { pod, log } = nodeServicePod("node-b", "kubelet", KUBELET_STOPPED, "+01:00");
    expect(pod.metadata).toMatchObject({ name: "kubelet-node-b", namespace: "kube-system", labels: { component: "kubelet" } });
    expect(pod.spec?.nodeName).toBe("node-b");
    expect(pod.status?.phase).toBe("Failed");
    expect(pod.status?.containerStatuses?.[0]?.state).toEqual({ terminated: { reason: "inactive (dead)", finishedAt: "2026-03-02T09:56:40+01:00" } });
    expect(log?.lines).toHaveLength(2);
  });

  it("stands a running one for a running pod, without log", () => {
    const { pod, log } = nodeServicePod("node-a", "containerd", CONTAINERD_RUNNING, "+01:00");
    expect(pod.status?.containerStatuses?.[0]).toMatchObject({ ready: true, state: { running: { startedAt: "2026-03-02T08:00:00+01:00" } } });
    expect(log).toBeUndefined();
  });
});

describe("alerts", () => {
  it("makes one Alertmanager alert per evidence line, firing past the collection", () => {
    const observation = alertsObservation(ALERTS, "shop", "+01:00", new Date("2026-03-02T09:00:00Z"));
    expect(observation?.alerts).toHaveLength(3);
    expect(observation?.alerts[0]).toEqual({
      labels: {
        alertname: "LATENCY_DEGRADATION",
        severity: "warning",
        service: "cart",
        namespace: "shop",
        signal: "Slow Response",
        description: "LATENCY_DEGRADATION [Slow Response] | cart-p90latency: Normal=5.00ms -> Current=90.00ms (+1700.0%)",
      },
      startsAt: "2026-03-02T09:57:00+01:00",
      endsAt: "2026-03-02T09:05:00.000Z",
    });
    expect(observation?.alerts[2]?.labels).toMatchObject({ alertname: "NETWORK_QUALITY_DEGRADED", node: "node-b" });
  });

  it("gives nothing for an empty file", () => {
    expect(alertsObservation({}, "shop", "+00:00", new Date())).toBeUndefined();
  });
});

describe("metrics", () => {
  it("splits columns at the last dash, tells nodes from services, leaves out empty cells", () => {
    const series = readMetricsCsv(METRICS_CSV, "+01:00", new Set(["node-b"]));
    expect(series.map(({ entity, metric, node, samples }) => [entity, metric, node, samples.length])).toEqual([
      ["cart", "cpu", false, 3],
      ["cart", "mem", false, 3],
      ["cart", "p90latency", false, 2],
      ["node-b", "tcp_retans", true, 3],
    ]);
    expect(series[0]?.samples[0]).toEqual([Date.parse("2026-03-02T08:56:00Z") / 1000, "0.05"]);
  });

  it("answers as a Prometheus matrix with the limit it saturates against", () => {
    const [cpu] = readMetricsCsv(METRICS_CSV, "+00:00", new Set());
    if (cpu === undefined) throw new Error("no series");
    const observation = metricObservation(cpu, "shop", { name: "cpu limit", value: 0.2 });
    expect(observation.unit).toBe("cores");
    const latency = readMetricsCsv(METRICS_CSV, "+00:00", new Set())[2];
    if (latency === undefined) throw new Error("no series");
    expect(metricObservation(latency, "shop").unit).toBe("ms");
    expect([...observation.data.result]).toEqual([{ metric: { __name__: "cpu", service: "cart", namespace: "shop" }, values: cpu.samples }]);
    expect([...(observation.limit?.result ?? [])][0]?.values.map(([, value]) => value)).toEqual(["0.2", "0.2", "0.2"]);
  });
});
