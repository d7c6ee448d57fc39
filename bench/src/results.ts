import type { HttpLoadResult } from "./http-load.js";
import type { MachineInfo } from "./machine.js";
import type { RawFloorResult } from "./raw-floor.js";
import type { BatchResult, Durations, ParallelismResult } from "./scenarios.js";
import type { TargetCheck } from "./targets.js";
import type { ThroughputRun } from "./throughput-run.js";
import type { AsyncBatchResult } from "./async-batch.js";
import type { StormResult } from "./storm.js";
import type { WebhookIntakeResult } from "./webhook-intake.js";
import type { MemoryRecallResult } from "./memory-recall.js";

/** Everything one run measured; written as bench/results/latest.json. */
export interface BenchResults {
  mode: "quick" | "full";
  startedAt: string;
  durationSeconds: number;
  machine: MachineInfo;
  commit: string;
  settings: {
    durations: Durations;
    workerConcurrency: number;
    maxConcurrentActions: number;
    throughputInFlight: number;
    redis: string;
    stubDelaysMs: { instant: number; slow: number };
  };
  plumbing?: {
    service: HttpLoadResult;
    raw: RawFloorResult;
    p50Ratio: number;
    /** Every round's full-path / raw-floor p50 ratio; the figures above are the median round's. */
    roundRatios: number[];
  };
  throughput: ThroughputRun[];
  parallelism?: ParallelismResult;
  batch: { workerProcesses: number; result: BatchResult }[];
  /** Scenarios 6-8 run with 2 worker processes; each ratio is to a figure of the same run. */
  storm?: StormResult;
  webhookIntake?: WebhookIntakeResult & {
    workerProcesses: number;
    /** Fresh alerts accepted per second / the throughput scenario's executions/s with as many workers. */
    ratioToThroughput: number;
  };
  asyncBatch?: AsyncBatchResult & {
    workerProcesses: number;
    /** Items/s / the throughput scenario's executions/s with as many workers. */
    ratioToThroughput: number;
  };
  /** Scenario 9: recall over a large organization's remembered executions (Redis alone, no service process). */
  memoryRecall?: MemoryRecallResult;
  targets: TargetCheck[];
  /** Scenarios that could not run, with the reason. */
  failures: string[];
}
