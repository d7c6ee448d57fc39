import { describe, expect, it } from "vitest";
import { DEFAULT_EVENTS, GET_EVENTS } from "../testing/synthetic-case.js";
import { describedEvents, listedEvents, mergeEvents } from "./events-text.js";
import { describeFields, field } from "./kubectl-text.js";

const now = new Date("2026-03-02T09:00:00Z");

describe("get events", () => {
  it("reads listing lines without a header, ages with counts included", () => {
    const events = listedEvents(GET_EVENTS, "shop", now);
    expect(
      events.map((event) => [event.involvedObject.kind, event.involvedObject.name, event.reason, event.count, event.firstTimestamp, event.lastTimestamp]),
    ).toEqual([
      ["ReplicaSet", "checkout-5d8f7c9b6d", "FailedCreate", 1, "2026-03-02T08:57:00.000Z", "2026-03-02T08:57:00.000Z"],
      ["Pod", "cart-7c9d8b6f5a-q8w2e", "Scheduled", 1, "2026-03-02T08:58:00.000Z", "2026-03-02T08:58:00.000Z"],
      ["Pod", "checkout-5d8f7c9b6d-x2k4p", "FailedScheduling", 3, "2026-03-02T08:58:00.000Z", "2026-03-02T08:59:40.000Z"],
    ]);
    expect(events[0]?.message).toBe(
      'Error creating: pods "checkout-5d8f7c9b6d-" is forbidden: exceeded quota: pods-quota, requested: pods=1, used: pods=3, limited: pods=3',
    );
  });

  it("leaves a node's event without a namespace: nodes have none", () => {
    const [event] = listedEvents(DEFAULT_EVENTS, "default", now);
    expect(event?.involvedObject).toEqual({ kind: "Node", name: "node-b" });
    expect(event?.metadata.namespace).toBe("default");
  });
});

describe("merging", () => {
  it("keeps one event per object, reason and message, with the describe's source", () => {
    const text = `Events:
  Type     Reason            Age   From               Message
  ----     ------            ----  ----               -------
  Warning  FailedScheduling  25s   default-scheduler  0/2 nodes are available: 1 node(s) had untolerated taint {gpu: true}, 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.`;
    const described = describedEvents(field(describeFields(text), "Events"), { kind: "Pod", name: "checkout-5d8f7c9b6d-x2k4p", namespace: "shop" }, now);
    const merged = mergeEvents([...listedEvents(GET_EVENTS, "shop", now), ...described]);
    const scheduling = merged.filter((event) => event.reason === "FailedScheduling");
    expect(scheduling).toHaveLength(1);
    expect(scheduling[0]).toMatchObject({
      count: 3,
      firstTimestamp: "2026-03-02T08:58:00.000Z",
      lastTimestamp: "2026-03-02T08:59:40.000Z",
      source: { component: "default-scheduler" },
    });
    expect(new Set(merged.map((event) => event.metadata.name)).size).toBe(merged.length);
  });
});
