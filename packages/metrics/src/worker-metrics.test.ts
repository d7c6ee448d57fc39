import { describe, expect, it } from "vitest";
import { createWorkerMetrics } from "./worker-metrics.js";

describe("createWorkerMetrics", () => {
  it("starts every outcome of the catalog's jobs at zero", async () => {
    const text = await createWorkerMetrics({ jobNames: ["execute"] }).registry.metrics();
    for (const outcome of ["result", "error", "timeout", "interrupted"]) {
      expect(text).toContain(`pes_jobs_total{job_name="execute",outcome="${outcome}"} 0`);
    }
    expect(text).toContain('pes_job_duration_seconds_count{job_name="execute"} 0');
  });

  it("counts job runs by outcome, with their durations", async () => {
    const metrics = createWorkerMetrics({ jobNames: ["execute"] });
    metrics.jobFinished("execute", "result", 0.2);
    metrics.jobFinished("execute", "timeout", 3);

    const text = await metrics.registry.metrics();
    expect(text).toContain('pes_jobs_total{job_name="execute",outcome="result"} 1');
    expect(text).toContain('pes_jobs_total{job_name="execute",outcome="timeout"} 1');
    expect(text).toContain('pes_job_duration_seconds_count{job_name="execute"} 2');
    expect(text).toContain('pes_job_duration_seconds_sum{job_name="execute"} 3.2');
  });

  it("counts actions by organization, connector, data source and outcome; times those that ran", async () => {
    const metrics = createWorkerMetrics({ jobNames: [] });
    metrics.actionFinished({ orgId: "acme", connector: "prometheus", dataSource: "metrics", outcome: "ok", seconds: 0.04 });
    metrics.actionFinished({ orgId: "acme", connector: "prometheus", dataSource: "metrics", outcome: "timeout", seconds: 15 });
    metrics.actionFinished({ orgId: "acme", connector: "http", dataSource: "deploys", outcome: "skipped" });

    const text = await metrics.registry.metrics();
    expect(text).toContain('pes_actions_total{org="acme",connector="prometheus",data_source="metrics",outcome="ok"} 1');
    expect(text).toContain('pes_actions_total{org="acme",connector="prometheus",data_source="metrics",outcome="timeout"} 1');
    expect(text).toContain('pes_actions_total{org="acme",connector="http",data_source="deploys",outcome="skipped"} 1');
    expect(text).toContain('pes_action_duration_seconds_count{org="acme",connector="prometheus",data_source="metrics"} 2');
    expect(text).not.toContain('pes_action_duration_seconds_count{org="acme",connector="http"');
  });

  it("shows a background queue's slots as the worker sets them", async () => {
    const metrics = createWorkerMetrics({ jobNames: [] });
    metrics.backgroundSlots("playbook-batch-executions", 16);
    metrics.backgroundSlots("playbook-batch-executions", 4);

    expect(await metrics.registry.metrics()).toContain('pes_worker_background_slots{queue="playbook-batch-executions"} 4');
  });

  it("adds up executions' budgets: spent by organization and kind, the limits that stopped work, per-minute refusals by data source", async () => {
    const metrics = createWorkerMetrics({ jobNames: [] });
    metrics.budgetSettled("acme", { spent: { queries: 3, bytes: 2_048, wallTimeMs: 1_500, modelTokens: 0 } });
    metrics.budgetSettled("acme", {
      spent: { queries: 2, bytes: 0, wallTimeMs: 500, modelTokens: 900 },
      exhausted: "queries",
      refused: { metrics: 2 },
    });
    const values = async (name: string) =>
      Object.fromEntries(
        ((await metrics.registry.getSingleMetric(name)?.get())?.values ?? []).map(({ labels, value }) => [Object.values(labels).join("/"), value]),
      );

    expect(await values("pes_budget_spent_total")).toEqual({
      "acme/queries": 5,
      "acme/bytes": 2_048,
      "acme/wall-time": 2,
      "acme/model-tokens": 900,
    });
    expect(await values("pes_budget_exhausted_total")).toEqual({ "acme/queries": 1 });
    expect(await values("pes_budget_refusals_total")).toEqual({ "acme/metrics": 2 });
  });
});
