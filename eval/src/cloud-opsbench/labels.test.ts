import type { Verdict } from "@pes/contracts";
import { describe, expect, it } from "vitest";
import { answerOf, objectOfSubject, predictionsOf, ROOT_CAUSE_OF_KIND, TAXONOMY_OF_ROOT_CAUSE } from "./labels.js";

const TAXONOMIES = [
  "Admission_Fault",
  "Infrastructure_Fault",
  "Performance_Fault",
  "Runtime_Fault",
  "Scheduling_Fault",
  "Service_Routing_Fault",
  "Startup_Fault",
];

function verdict(fields: Partial<Verdict>): Verdict {
  return { conclusion: "cause", symptoms: [], background: [], ruledOut: [], normal: [], unchecked: [], ...fields };
}

describe("the label table", () => {
  it("maps each kind to a distinct label, each with one of the benchmark's taxonomies", () => {
    const labels = Object.values(ROOT_CAUSE_OF_KIND);
    expect(labels).toHaveLength(40);
    expect(new Set(labels).size).toBe(labels.length);
    for (const label of labels) expect(TAXONOMIES).toContain(TAXONOMY_OF_ROOT_CAUSE[label]);
  });

  it("maps subjects to the benchmark's objects", () => {
    expect(objectOfSubject("deployment/cart")).toBe("app/cart");
    expect(objectOfSubject("statefulset/db")).toBe("app/db");
    expect(objectOfSubject("service/cart")).toBe("app/cart");
    expect(objectOfSubject("namespace/shop")).toBe("namespace/shop");
    expect(objectOfSubject("node/node-b")).toBe("node/node-b");
    expect(objectOfSubject("pod/cart-1")).toBeUndefined();
    expect(objectOfSubject(undefined)).toBeUndefined();
  });

  it("answers a finding with the triple; an unknown kind answers nothing", () => {
    expect(answerOf({ kind: "quota/pods", subject: "namespace/shop", action: "Cluster state" })).toEqual({
      fault_taxonomy: "Admission_Fault",
      fault_object: "namespace/shop",
      root_cause: "namespace_pod_quota_exceeded",
    });
    expect(answerOf({ kind: "unschedulable/taint", subject: "deployment/checkout", action: "Cluster state" })).toEqual({
      fault_taxonomy: "Scheduling_Fault",
      fault_object: "app/checkout",
      root_cause: "taint_toleration_mismatch",
    });
    expect(answerOf({ kind: "crash-loop", subject: "deployment/checkout", action: "Cluster state" })).toBeUndefined();
    expect(answerOf({ kind: "toString", subject: "deployment/checkout", action: "Cluster state" })).toBeUndefined();
  });

  it("answers a CPU at its limit or throttled past its threshold as the app's CPU overload, and where a slowdown begins as its network delay", () => {
    const overload = { fault_taxonomy: "Performance_Fault", fault_object: "app/cart", root_cause: "pod_cpu_overload" };
    const subject = "namespace=shop, service=cart";
    expect(answerOf({ kind: "saturation", subject, detail: "cpu limit", action: "Metrics of cart: cpu" })).toEqual(overload);
    expect(answerOf({ kind: "saturation", subject, action: "Metrics of cart: cpu_cfs" })).toEqual(overload);
    expect(answerOf({ kind: "saturation", subject, detail: "memory limit", action: "Metrics of cart: mem" })).toBeUndefined();
    expect(answerOf({ kind: "latency", subject, action: "Metrics of cart: p95latency" })).toEqual({ ...overload, root_cause: "pod_network_delay" });
  });
});

describe("predictions", () => {
  const cause = { kind: "oom", subject: "deployment/cart", action: "Cluster state", confidence: "high" as const };

  it("ranks cause, alternative, then symptoms of a known kind, three at most, without repeats", () => {
    const predictions = predictionsOf(
      verdict({
        conclusion: "ambiguous",
        cause: { ...cause, confidence: "low" },
        alternative: { kind: "probe/liveness-port", subject: "deployment/cart", action: "Cluster state", confidence: "low" },
        symptoms: [
          { kind: "oom", subject: "deployment/cart", action: "Cluster state" },
          { kind: "crash-loop", subject: "deployment/cart", action: "Cluster state" },
          { kind: "node/kubelet", subject: "node/node-b", action: "Cluster state" },
          { kind: "quota/pods", subject: "namespace/shop", action: "Cluster state" },
        ],
      }),
    );
    expect(predictions.map((prediction) => prediction?.root_cause)).toEqual(["oom_killed", "liveness_probe_incorrect_port", "kubelet_unavailable"]);
  });

  it("keeps the rank of a cause that maps to nothing, and predicts nothing for no cause", () => {
    const predictions = predictionsOf(verdict({ cause: { ...cause, kind: "deploy" }, alternative: { ...cause, confidence: "low" } }));
    expect(predictions[0]).toBeNull();
    expect(predictions[1]?.root_cause).toBe("oom_killed");
    expect(predictionsOf(verdict({ conclusion: "no-cause", symptoms: [{ kind: "oom", subject: "deployment/cart", action: "x" }] }))).toEqual([]);
  });
});
