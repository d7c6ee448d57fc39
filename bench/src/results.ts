import type { HttpLoadResult } from "./http-load.js";
import type { MachineInfo } from "./machine.js";
import type { MachineUsage, ProcessUsage } from "./process-sampler.js";
import type { RawFloorResult } from "./raw-floor.js";
import type { BatchResult, Durations, ParallelismResult } from "./scenarios.js";
import type { TargetCheck } from "./targets.js";

/** CPU and memory of one process during a measurement. */
export interface NamedUsage {
  name: string;
  usage: ProcessUsage;
}

export interface ThroughputRun {
  workerProcesses: number;
  service: HttpLoadResult;
  /** Raw BullMQ at the same in-flight count with the same number of worker processes. */
  raw: RawFloorResult;
  ratioToRaw: number;
  /** The bare path (bare-path.ts) at 64 in flight on as many worker processes, right after the service. */
  barePath: HttpLoadResult;
  /** bare path executions/s / raw BullMQ jobs/s: the architecture's own ceiling for ratioToRaw. */
  barePathRatio: number;
  /** Every round's ratio; the figures of this run are those of the round with the median ratio. */
  roundRatios: number[];
  /** Peak RSS of the API and of the largest worker over every round, warm-ups included (scenario 5). */
  memory: { api: ProcessUsage; worker: ProcessUsage };
  /** Where the cores went during the service run and during the raw run. */
  serviceProcesses: NamedUsage[];
  rawProcesses: NamedUsage[];
  /** The whole machine meanwhile: what the benchmark's processes do not account for is someone else's. */
  serviceMachine: MachineUsage;
  rawMachine: MachineUsage;
}

/** Everything one run measured; written as bench/results/latest.json. */
export interface BenchResults {
  mode: "quick" | "full";
  /** A profiled run runs under `node --cpu-prof`: its figures are inflated and only its profiles count. */
  profiled: boolean;
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
    httpHop: HttpLoadResult;
    p50Ratio: number;
    /** The bare path (the architecture with zero work of ours) at 1 in flight. */
    barePath: HttpLoadResult;
    /** bare path p50 / raw floor p50: what the 2× target leaves for all of the service's own work. */
    barePathRatio: number;
    /** Every round's ratios to the raw floor; the figures above are the round with the median full-path ratio. */
    roundRatios: { full: number; bare: number }[];
  };
  throughput: ThroughputRun[];
  parallelism?: ParallelismResult;
  batch: { workerProcesses: number; result: BatchResult }[];
  targets: TargetCheck[];
  /** Scenarios that could not run, with the reason. */
  failures: string[];
}
