import type { ChildHandle } from "./child-processes.js";
import { cpuWindow, type CpuPerOperation } from "./cpu-time.js";
import type { HttpLoadResult } from "./http-load.js";
import { peakRssMB } from "./peak-rss.js";
import type { RawFloor, RawFloorResult } from "./raw-floor.js";
import { rawThroughput, throughput, type Durations, type ServiceTarget } from "./scenarios.js";
import { medianItem } from "./stats.js";

/**
 * CPU per completed execution of the full path (API, workers, Redis) and per job of the raw floor
 * (producer, workers, Redis), over the same round's measured windows.
 */
export interface ThroughputCpu {
  service: CpuPerOperation;
  raw: CpuPerOperation;
  /** service.totalUs / raw.totalUs. */
  ratioToRaw: number;
  /** Whether Redis is counted on both sides: not when it is an external REDIS_URL (no pid to read). */
  redisCounted: boolean;
}

export interface ThroughputRun {
  workerProcesses: number;
  service: HttpLoadResult;
  /** Raw BullMQ at the same in-flight count with the same number of worker processes. */
  raw: RawFloorResult;
  ratioToRaw: number;
  /** Every round's ratio; the figures of this run are those of the round with the median ratio. */
  roundRatios: number[];
  /** The median round's CPU per execution against the raw floor's CPU per job. */
  cpu: ThroughputCpu;
  /** Every round's CPU ratio (service / raw), in the order of `roundRatios`. */
  roundCpuRatios: number[];
  /** Scenario 5: peak RSS (VmHWM) of the API and of the largest worker, read after the last round. */
  peakRssMB: { api: number; worker: number };
}

/**
 * Scenario 2 (with 5), in `durations.rounds` rounds: raw BullMQ at 64 in flight on as many worker
 * processes as the service has, then the service at 64 in flight, each process's CPU time read around
 * each measured window (not the warm-ups). The round with the median ratio is reported, with every
 * round's ratio.
 */
export async function measureThroughput(
  target: ServiceTarget,
  bookName: string,
  floor: RawFloor,
  processes: { api: ChildHandle; workers: readonly ChildHandle[]; redis: ChildHandle | undefined },
  durations: Durations,
): Promise<ThroughputRun> {
  const redis: Record<string, number[]> = processes.redis === undefined ? {} : { redis: [processes.redis.pid] };
  const floorPids = floor.pids();
  const rounds: { raw: RawFloorResult; service: HttpLoadResult; ratioToRaw: number; cpu: ThroughputCpu }[] = [];
  for (let round = 0; round < durations.rounds; round += 1) {
    const rawCpu = cpuWindow({ producer: [floorPids.producer], workers: floorPids.workers, ...redis });
    const raw = await rawThroughput(floor, durations, rawCpu.around);
    const serviceCpu = cpuWindow({ api: [processes.api.pid], workers: processes.workers.map((worker) => worker.pid), ...redis });
    const service = await throughput(target, bookName, durations, serviceCpu.around);
    const cpu = { service: serviceCpu.per(service.successes), raw: rawCpu.per(raw.completed), redisCounted: processes.redis !== undefined };
    rounds.push({ raw, service, ratioToRaw: service.throughput / raw.jobsPerSecond, cpu: { ...cpu, ratioToRaw: cpu.service.totalUs / cpu.raw.totalUs } });
  }
  return {
    workerProcesses: processes.workers.length,
    ...medianItem(rounds, (round) => round.ratioToRaw),
    roundRatios: rounds.map((round) => round.ratioToRaw),
    roundCpuRatios: rounds.map((round) => round.cpu.ratioToRaw),
    peakRssMB: {
      api: peakRssMB(processes.api.pid),
      // NaN (unreadable) wins over any figure: a worker that could not be read must not pass the target.
      worker: Math.max(...processes.workers.map((worker) => peakRssMB(worker.pid))),
    },
  };
}
