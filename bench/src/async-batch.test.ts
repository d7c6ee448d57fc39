import { describe, expect, it } from "vitest";
import { eventLoopDelayOf, finishedAt } from "./async-batch.js";

const read = (at: number, done: number) => ({ at, done, total: 1_000, failed: 0, completed: done === 1_000 });

describe("finishedAt", () => {
  it("places the last item between the last two reads at the pace before them", () => {
    // 400 items per 500 ms: the 200 left after 1,000 ms take 250 ms more.
    expect(finishedAt([read(500, 400), read(1_000, 800), read(1_500, 1_000)])).toBe(1_250);
  });

  it("never places it after the read that saw the batch done", () => {
    expect(finishedAt([read(500, 790), read(1_000, 800), read(1_500, 1_000)])).toBe(1_500);
  });

  it("takes the read that saw it done when there is no pace to go by", () => {
    expect(finishedAt([read(300, 1_000)])).toBe(300);
    expect(finishedAt([read(300, 500), read(600, 1_000)])).toBe(600);
  });
});

describe("eventLoopDelayOf", () => {
  it("reads prom-client's event-loop gauges in ms", () => {
    const text = [
      "nodejs_eventloop_lag_seconds 0.002",
      "nodejs_eventloop_lag_max_seconds 1.25",
      "nodejs_eventloop_lag_p50_seconds 0.0101",
      "nodejs_eventloop_lag_p99_seconds 0.048",
    ].join("\n");
    const delay = eventLoopDelayOf(text);
    expect(delay.p50Ms).toBeCloseTo(10.1);
    expect(delay.p99Ms).toBeCloseTo(48);
    expect(delay.maxMs).toBeCloseTo(1_250);
  });

  it("is NaN where the API exposes no such gauge", () => {
    expect(eventLoopDelayOf("pes_executions_coalesced_total 0").p99Ms).toBeNaN();
  });
});
