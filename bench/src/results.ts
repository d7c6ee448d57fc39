import type { HttpLoadResult } from "./http-load.js";
import type { MachineInfo } from "./machine.js";
import type { RawFloorResult } from "./raw-floor.js";
import type { BatchResult, Durations, ParallelismResult } from "./scenarios.js";
import type { TargetCheck } from "./targets.js";
import type { ThroughputRun } from "./throughput-run.js";

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
  targets: TargetCheck[];
  /** Scenarios that could not run, with the reason. */
  failures: string[];
}
