import { describe, expect, it } from "vitest";
import { cpuPerOperation, cpuSeconds, cpuTicksOfStat, readCpuSeconds } from "./cpu-time.js";

describe("cpuTicksOfStat", () => {
  it("adds utime and stime, counting fields after the command name even when it holds spaces and parentheses", () => {
    // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime …
    const stat = "4242 (node (x) y) S 1 4242 4242 0 -1 4194560 900 0 0 0 1234 56 7 8 20 0 11 0";
    expect(cpuTicksOfStat(stat)).toBe(1290);
  });
});

describe("cpuSeconds", () => {
  it("reads this process's CPU time, at most what Node counts for it", () => {
    const usage = process.cpuUsage();
    const seconds = cpuSeconds(process.pid);
    expect(seconds).toBeGreaterThanOrEqual(0);
    // /proc counts in 10 ms ticks; Node in µs.
    expect(seconds).toBeLessThanOrEqual((usage.user + usage.system) / 1e6 + 0.02);
  });

  it("is NaN for a process that does not exist, never a passing 0", () => {
    expect(cpuSeconds(2 ** 30)).toBeNaN();
    expect(readCpuSeconds({ gone: [process.pid, 2 ** 30] }).gone).toBeNaN();
  });
});

describe("cpuPerOperation", () => {
  it("divides each role's CPU over the window by the operations, and adds the roles", () => {
    const cpu = cpuPerOperation({ api: 10, workers: 20, redis: 5 }, { api: 10.5, workers: 21, redis: 5.25 }, 5_000);
    expect(cpu.byRoleUs.api).toBeCloseTo(100);
    expect(cpu.byRoleUs.workers).toBeCloseTo(200);
    expect(cpu.byRoleUs.redis).toBeCloseTo(50);
    expect(cpu.totalUs).toBeCloseTo(350);
  });

  it("is NaN without operations or with a reading missing", () => {
    expect(cpuPerOperation({ api: 1 }, { api: 2 }, 0).totalUs).toBeNaN();
    expect(cpuPerOperation({}, { api: 2 }, 100).totalUs).toBeNaN();
    expect(cpuPerOperation({ api: 1 }, { api: Number.NaN }, 100).totalUs).toBeNaN();
    expect(cpuPerOperation({}, {}, 100).totalUs).toBeNaN();
  });
});
