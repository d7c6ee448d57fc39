import type { ChildHandle } from "./child-processes.js";
import type { HttpLoadResult } from "./http-load.js";
import { peakRssMB } from "./peak-rss.js";
import type { RawFloor, RawFloorResult } from "./raw-floor.js";
import { rawThroughput, throughput, type Durations, type ServiceTarget } from "./scenarios.js";
import { medianItem } from "./stats.js";

export interface ThroughputRun {
  workerProcesses: number;
  service: HttpLoadResult;
  /** Raw BullMQ at the same in-flight count with the same number of worker processes. */
  raw: RawFloorResult;
  ratioToRaw: number;
  /** Every round's ratio; the figures of this run are those of the round with the median ratio. */
  roundRatios: number[];
  /** Scenario 5: peak RSS (VmHWM) of the API and of the largest worker, read after the last round. */
  peakRssMB: { api: number; worker: number };
}

/**
 * Scenario 2 (with 5), in `durations.rounds` rounds: raw BullMQ at 64 in flight on as many worker
 * processes as the service has, then the service at 64 in flight. The round with the median ratio is
 * reported, with every round's ratio.
 */
export async function measureThroughput(
  target: ServiceTarget,
  bookName: string,
  floor: RawFloor,
  processes: { api: ChildHandle; workers: readonly ChildHandle[] },
  durations: Durations,
): Promise<ThroughputRun> {
  const rounds: { raw: RawFloorResult; service: HttpLoadResult; ratioToRaw: number }[] = [];
  for (let round = 0; round < durations.rounds; round += 1) {
    const raw = await rawThroughput(floor, durations);
    const service = await throughput(target, bookName, durations);
    rounds.push({ raw, service, ratioToRaw: service.throughput / raw.jobsPerSecond });
  }
  return {
    workerProcesses: processes.workers.length,
    ...medianItem(rounds, (round) => round.ratioToRaw),
    roundRatios: rounds.map((round) => round.ratioToRaw),
    peakRssMB: {
      api: peakRssMB(processes.api.pid),
      // NaN (unreadable) wins over any figure: a worker that could not be read must not pass the target.
      worker: Math.max(...processes.workers.map((worker) => peakRssMB(worker.pid))),
    },
  };
}
