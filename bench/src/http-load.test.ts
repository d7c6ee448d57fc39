import { describe, expect, it } from "vitest";
import { summarizeHttpLoad, type HttpLoadSample } from "./http-load.js";
import { summarizeRawFloor } from "./raw-floor.js";

function sample(latencies: number[], overrides: Partial<HttpLoadSample> = {}): HttpLoadSample {
  return {
    connections: 1,
    elapsedMs: 1_000,
    successes: latencies.length,
    errorBodies: 0,
    non2xx: 0,
    statusCodes: { "200": latencies.length },
    connectionErrors: 0,
    timeouts: 0,
    firstErrorBody: undefined,
    latencies,
    ...overrides,
  };
}

describe("pooling interleaved slices of one path", () => {
  it("adds counts and times and takes percentiles over all latencies, not per slice", () => {
    const pooled = summarizeHttpLoad([sample([1, 1, 1]), sample([5, 5], { non2xx: 1, statusCodes: { "200": 2, "503": 1 }, firstErrorBody: "503 busy" })]);
    expect(pooled).toMatchObject({
      elapsedMs: 2_000,
      responses: 6,
      successes: 5,
      non2xx: 1,
      statusCodes: { "200": 5, "503": 1 },
      throughput: 2.5,
      firstErrorBody: "503 busy",
    });
    expect(pooled.latency).toMatchObject({ count: 5, p50: 1, max: 5 });
  });

  it("pools the raw floor's runs the same way", () => {
    const run = (latencies: number[]) => ({ inFlight: 1, workerProcesses: 1, elapsedMs: 500, errors: 1, latencies });
    expect(summarizeRawFloor([run([2, 2, 2]), run([4, 4, 4])])).toMatchObject({
      durationMs: 1_000,
      completed: 6,
      errors: 2,
      jobsPerSecond: 6,
      latency: { p50: 2, p90: 4 },
    });
  });

  it("refuses to summarize nothing", () => {
    expect(() => summarizeHttpLoad([])).toThrow(RangeError);
    expect(() => summarizeRawFloor([])).toThrow(RangeError);
  });
});
