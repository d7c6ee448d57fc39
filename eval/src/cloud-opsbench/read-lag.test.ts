import type { KubernetesEvent, Pod } from "@pes/contracts";
import { describe, expect, it } from "vitest";
import { lagOfListedPods, lagOfScheduledEvents, shiftEvents, shiftTime } from "./read-lag.js";

const started = (name: string, at: string): [string, Pod] => [name, { metadata: { name }, status: { startTime: at } }];
const scheduled = (name: string, at: string): KubernetesEvent => ({
  metadata: { name: `${name}.1` },
  involvedObject: { kind: "Pod", name },
  reason: "Scheduled",
  count: 1,
  firstTimestamp: at,
  lastTimestamp: at,
});

describe("the lag of an output", () => {
  // Ages read against a stamp taken 30 s after kubectl ran put every time 30 s too late.
  const pods = new Map([started("a", "2026-03-02T09:58:00+01:00"), started("b", "2026-03-02T09:59:00+01:00")]);

  it("is the median of its Scheduled events against their pods' start times, in whole seconds", () => {
    const events = [scheduled("a", "2026-03-02T08:58:30.123Z"), scheduled("b", "2026-03-02T08:59:30.123Z"), scheduled("c", "2026-03-02T08:00:00Z")];
    expect(lagOfScheduledEvents(events, pods)).toBe(30_000);
    expect(lagOfScheduledEvents([], pods)).toBe(0);
  });

  it("is read from a table's creation times against the same start times", () => {
    const listed = new Map<string, Pod>([["a", { metadata: { name: "a", creationTimestamp: "2026-03-02T08:58:31Z" } }]]);
    expect(lagOfListedPods(listed, pods)).toBe(31_000);
    // A table read before the stamp never comes out ahead of it.
    expect(lagOfListedPods(new Map<string, Pod>([["a", { metadata: { name: "a", creationTimestamp: "2026-03-02T08:57:00Z" } }]]), pods)).toBe(0);
  });

  it("moves times back when found", () => {
    expect(shiftEvents([scheduled("a", "2026-03-02T08:57:30Z")], 30_000)[0]?.lastTimestamp).toBe("2026-03-02T08:57:00.000Z");
    expect(shiftTime("2026-03-02T08:57:30Z", 30_000)).toBe("2026-03-02T08:57:00.000Z");
    expect(shiftTime("2026-03-02T08:57:30Z", 0)).toBe("2026-03-02T08:57:30Z");
  });
});
