import type { Pod, TimeWindow } from "@pes/contracts";
import { describe, expect, it } from "vitest";
import { leastRestartSpanMs, podFindings } from "./kubernetes-reading.js";

const window: TimeWindow = { start: new Date("2026-11-20T13:08:00Z"), time: new Date("2026-11-20T14:08:00Z"), end: new Date("2026-11-20T14:23:00Z") };

describe("podFindings", () => {
  // test/scenarios: node-oom, where a job crash-looping for six hours read as a symptom of the incident.
  it("dates a pod whose restarts cannot fit in the window at the earliest they can have begun", () => {
    const crashLooping = (restartCount: number): Pod => ({
      metadata: { name: "report-generator-5d4-q7k" },
      status: {
        containerStatuses: [
          {
            name: "report-generator",
            restartCount,
            state: { waiting: { reason: "CrashLoopBackOff" } },
            lastState: { terminated: { reason: "Error", exitCode: 1, finishedAt: "2026-11-20T14:04:00Z" } },
          },
        ],
      },
    });
    expect(leastRestartSpanMs(1)).toBe(0);
    expect(leastRestartSpanMs(6)).toBe(310_000);
    expect(leastRestartSpanMs(7)).toBe(610_000);
    // 71 restarts: 10 + 20 + 40 + 80 + 160 s, then 65 × 5 min, at least 5 h 30 min 10 s before the last.
    const [old] = podFindings([crashLooping(71)], undefined, window, { action: "Pods" });
    expect(old).toMatchObject({ reason: "CrashLoopBackOff", onset: new Date(Date.parse("2026-11-20T14:04:00Z") - 19_810_000) });
    // A few restarts fit in the window: dated at the last one, as ever.
    const [recent] = podFindings([crashLooping(4)], undefined, window, { action: "Pods" });
    expect(recent).toMatchObject({ onset: new Date("2026-11-20T14:04:00Z") });
  });

});
