import type { BenchResults } from "./results.js";
import { checkTarget, type TargetCheck } from "./targets.js";

/** The targets of BENCHMARKS.md, each checked against what this run measured (missing scenarios are skipped). */
export function evaluateTargets(results: BenchResults): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const { plumbing, parallelism } = results;
  if (plumbing !== undefined) {
    checks.push(checkTarget("1 plumbing", "full-path p50 / raw BullMQ p50", plumbing.p50Ratio, "×", "at most", 2));
    checks.push(checkTarget("1 plumbing", "full-path p50", plumbing.service.latency.p50, "ms", "at most", 3));
  }
  for (const run of results.throughput) {
    const scenario = `2 throughput, ${run.workerProcesses} worker${run.workerProcesses > 1 ? "s" : ""}`;
    checks.push(checkTarget(scenario, "executions/s at 64 in flight", run.service.throughput, "exec/s", "at least", 1500));
    checks.push(checkTarget(scenario, "executions/s / raw BullMQ jobs/s at 64 in flight", run.ratioToRaw, "×", "at least", 0.5));
    checks.push(checkTarget(scenario, "p99", run.service.latency.p99, "ms", "at most", 100));
  }
  if (parallelism !== undefined) {
    checks.push(checkTarget("3 parallelism", "median wall / critical path (200 ms)", parallelism.criticalPathRatio, "×", "at most", 1.15));
  }
  for (const { workerProcesses, result } of results.batch) {
    const scenario = `4 batch, ${workerProcesses} worker${workerProcesses > 1 ? "s" : ""}`;
    checks.push(checkTarget(scenario, "items/s in a batch of 100", result.itemsPerSecond, "items/s", "at least", 1000));
  }
  if (results.throughput.length > 0) {
    const apiPeak = Math.max(...results.throughput.map((run) => run.peakRssMB.api));
    const workerPeak = Math.max(...results.throughput.map((run) => run.peakRssMB.worker));
    checks.push(checkTarget("5 memory", "API peak RSS (VmHWM) after scenario 2", apiPeak, "MB", "at most", 150));
    checks.push(checkTarget("5 memory", "worker peak RSS (VmHWM) after scenario 2", workerPeak, "MB", "at most", 150));
  }
  const { storm, asyncBatch } = results;
  if (storm !== undefined) {
    checks.push(checkTarget("6 storm", `executions run for ${storm.requests} identical requests`, storm.executionsRun, "exec", "at most", 1));
  }
  if (asyncBatch !== undefined) {
    const scenario = `8 async batch of ${asyncBatch.items}, ${asyncBatch.workerProcesses} workers`;
    checks.push(checkTarget(scenario, "items/s / throughput executions/s (same workers)", asyncBatch.ratioToThroughput, "×", "at least", 0.8));
    checks.push(checkTarget(scenario, "sync p99 during the batch / idle", asyncBatch.p99Ratio, "×", "at most", 2));
    checks.push(checkTarget(scenario, "202 after the POST", asyncBatch.acceptMs, "ms", "at most", 300));
    checks.push(checkTarget(scenario, "API event-loop delay p99, POST to 202 and after", asyncBatch.eventLoopDelay.p99Ms, "ms", "at most", 50));
  }
  return checks;
}
