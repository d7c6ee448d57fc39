import { describe, expect, it } from "vitest";
import { moduleOf, summarizeProfile, type CpuProfile } from "./cpu-profile-summary.js";

const frame = (functionName: string, url: string) => ({ functionName, url, lineNumber: 0 });

describe("moduleOf", () => {
  it("names npm packages, our packages and apps, and node internals", () => {
    expect(moduleOf("file:///r/node_modules/@opentelemetry/api/build/x.js", "f")).toBe("@opentelemetry/api");
    expect(moduleOf("file:///r/node_modules/bullmq/dist/esm/classes/job.js", "f")).toBe("bullmq");
    expect(moduleOf("file:///r/packages/queue/dist/client.js", "f")).toBe("@pes/queue");
    expect(moduleOf("file:///r/apps/api/dist/app.js", "f")).toBe("apps/api");
    expect(moduleOf("node:internal/streams/writable", "f")).toBe("node:streams/writable");
    expect(moduleOf("", "(garbage collector)")).toBe("(garbage collector)");
  });
});

describe("summarizeProfile", () => {
  it("splits self time by function and module, and credits inclusive time to our own callers", () => {
    const profile: CpuProfile = {
      nodes: [
        { id: 1, callFrame: frame("(root)", ""), children: [2, 5] },
        { id: 2, callFrame: frame("handle", "file:///r/apps/api/dist/route.js"), children: [3] },
        { id: 3, callFrame: frame("stringify", "file:///r/node_modules/fast-json/index.js"), children: [] },
        { id: 5, callFrame: frame("(idle)", ""), children: [] },
      ],
      samples: [2, 3, 3, 5],
      timeDeltas: [1000, 1000, 2000, 4000],
    };
    const summary = summarizeProfile(profile);
    expect(summary.totalMs).toBe(8);
    expect(summary.idlePercent).toBe(50);
    expect(summary.selfByModule[0]).toMatchObject({ name: "fast-json", time: 3000, busyPercent: 75 });
    expect(summary.totalByOwnFunction[0]).toMatchObject({ name: "handle apps/api/dist/route.js:1", time: 4000, busyPercent: 100 });
  });
});
