import { describe, expect, it } from "vitest";
import { gaugeValue, sumCounter } from "./metric-counter.js";

const exposition = [
  "# HELP pes_jobs_total Jobs run.",
  "# TYPE pes_jobs_total counter",
  'pes_jobs_total{job_name="execute",outcome="result"} 120',
  'pes_jobs_total{job_name="execute",outcome="error"} 3',
  'pes_jobs_total{job_name="post-batch-item",outcome="result"} 7',
  'pes_jobs_total_created{job_name="execute",outcome="result"} 1764000000',
  "pes_executions_coalesced_total 42",
].join("\n");

describe("sumCounter", () => {
  it("adds the samples of the series that carry every asked label, and no other metric's", () => {
    expect(sumCounter(exposition, "pes_jobs_total", { job_name: "execute" })).toBe(123);
    expect(sumCounter(exposition, "pes_jobs_total")).toBe(130);
  });

  it("reads a counter without labels, and 0 for one that is absent", () => {
    expect(sumCounter(exposition, "pes_executions_coalesced_total")).toBe(42);
    expect(sumCounter(exposition, "pes_missing_total")).toBe(0);
  });
});

describe("gaugeValue", () => {
  it("reads an unlabelled sample, not a longer name that starts with it", () => {
    const text = ["# TYPE nodejs_eventloop_lag_p99_seconds gauge", "nodejs_eventloop_lag_p99_seconds_x 9", "nodejs_eventloop_lag_p99_seconds 0.0123"].join(
      "\n",
    );
    expect(gaugeValue(text, "nodejs_eventloop_lag_p99_seconds")).toBe(0.0123);
  });

  it("is NaN for a gauge that is absent, never a passing 0", () => {
    expect(gaugeValue(exposition, "nodejs_eventloop_lag_p99_seconds")).toBeNaN();
  });
});
