import { describe, expect, it } from "vitest";
import { DESCRIBE_NODE_B, GET_NODES } from "../testing/synthetic-case.js";
import { nodesOfTable, parseNodeDescribe } from "./nodes-text.js";

describe("describe nodes", () => {
  it("reads taints, cordon, conditions with their messages, capacity and events", () => {
    const parsed = parseNodeDescribe(DESCRIBE_NODE_B, new Date("2026-03-02T09:00:00Z"));
    expect(parsed?.node.spec).toEqual({
      unschedulable: true,
      taints: [
        { key: "gpu", value: "true", effect: "NoSchedule" },
        { key: "node.kubernetes.io/unreachable", effect: "NoExecute" },
      ],
    });
    expect(parsed?.node.status?.conditions?.[1]).toEqual({
      type: "Ready",
      status: "Unknown",
      reason: "NodeStatusUnknown",
      message: "Kubelet stopped posting node status.",
      lastHeartbeatTime: "2026-03-02T09:55:00+01:00",
      lastTransitionTime: "2026-03-02T09:57:00+01:00",
    });
    expect(parsed?.node.status?.allocatable).toEqual({ cpu: "3800m", memory: "7942560Ki", pods: "110" });
    expect(parsed?.node.metadata.labels).toEqual({ "kubernetes.io/hostname": "node-b", gpu: "true" });
    expect(parsed?.events.map((event) => [event.involvedObject, event.reason])).toEqual([[{ kind: "Node", name: "node-b" }, "NodeNotReady"]]);
  });

  it("reads get nodes' status column as the Ready condition and the cordon", () => {
    expect(nodesOfTable(GET_NODES)).toEqual([
      { metadata: { name: "node-a" }, spec: { unschedulable: false }, status: { conditions: [{ type: "Ready", status: "True" }] } },
      { metadata: { name: "node-b" }, spec: { unschedulable: true }, status: { conditions: [{ type: "Ready", status: "False" }] } },
    ]);
  });
});
