import { describe, expect, it } from "vitest";
import { type CpuProfile, profileShares } from "./profile-shares.js";

const repo = "file:///srv/pes";
const frame = (id: number, functionName: string, url: string, children: number[] = []) => ({ id, callFrame: { functionName, url }, children });

/** root ─ main.js ─ route ─ ioredis write; root ─ ioredis parser; root ─ chart store ─ ioredis write; idle; GC. */
const profile: CpuProfile = {
  nodes: [
    frame(1, "(root)", "", [2, 5, 6, 8, 9, 10]),
    frame(2, "", `${repo}/apps/worker/dist/main.js`, [3]),
    frame(3, "handle", `${repo}/apps/worker/dist/job-handlers.js`, [4]),
    frame(4, "sendCommand", `${repo}/node_modules/ioredis/built/Redis.js`),
    frame(5, "execute", `${repo}/node_modules/redis-parser/lib/parser.js`),
    frame(6, "keepCharts", `${repo}/packages/executions/dist/chart-store.js`, [7]),
    frame(7, "sendCommand", `${repo}/node_modules/ioredis/built/Redis.js`),
    frame(8, "(idle)", ""),
    frame(9, "(garbage collector)", ""),
    frame(10, "toString", "node:internal/timers"),
  ],
  samples: [4, 5, 5, 7, 8, 8, 8, 8, 9, 10],
  timeDeltas: [100, 100, 100, 100, 500, 500, 500, 500, 100, 100],
};

describe("profileShares", () => {
  const result = profileShares(profile);
  const share = (part: string) => (result.partMs.get(part) ?? Number.NaN) / result.busyMs;

  it("charges a sample to the nearest frame of the service's code, else to the library at its top", () => {
    expect(share("routes and job handlers: headers, writing the response")).toBeCloseTo(1 / 6);
    expect(share("charts: their data and its SET")).toBeCloseTo(1 / 6);
    expect(share("Redis client and BullMQ: replies as they arrive")).toBeCloseTo(2 / 6);
    expect(share("garbage collection")).toBeCloseTo(1 / 6);
    expect(share("Node's internals: timers, microtasks, events")).toBeCloseTo(1 / 6);
  });

  it("leaves idle time out and tells the process's role from its entry point", () => {
    expect(result.busyMs).toBeCloseTo(0.6);
    expect(result.role).toBe("worker");
    expect([...result.partMs.values()].reduce((sum, ms) => sum + ms, 0)).toBeCloseTo(result.busyMs);
  });
});
