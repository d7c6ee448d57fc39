import type { ChildHandle } from "./child-processes.js";
import type { HttpLoadResult } from "./http-load.js";
import { startProcessSampler, type MachineUsage, type ProcessUsage } from "./process-sampler.js";
import type { RawFloor } from "./raw-floor.js";
import type { NamedUsage, ThroughputRun } from "./results.js";
import { barePathThroughput, rawThroughput, throughput, type Durations, type ServiceTarget } from "./scenarios.js";
import { medianItem } from "./stats.js";

export interface ThroughputProcesses {
  api: ChildHandle;
  workers: readonly ChildHandle[];
  stub: ChildHandle;
  /** Undefined when Redis is external (REDIS_URL): its CPU is then not ours to read. */
  redis: ChildHandle | undefined;
}

interface Sampling {
  /** Wraps the measured part of a scenario (after its warm-up). */
  measured: <T>(run: () => Promise<T>) => Promise<T>;
  usage(): { processes: NamedUsage[]; machine: MachineUsage };
}

/** Samples CPU and memory of the named processes, and the whole machine's CPU, while `measured` runs. */
function sampling(named: readonly { name: string; pid: number }[]): Sampling {
  let usage: { processes: NamedUsage[]; machine: MachineUsage } | undefined;
  return {
    async measured(run) {
      const sampler = startProcessSampler(named.map(({ pid }) => pid));
      try {
        return await run();
      } finally {
        const { processes, machine } = sampler.stop();
        usage = { machine, processes: named.map(({ name, pid }) => ({ name, usage: processes.get(pid) ?? emptyUsage() })) };
      }
    },
    usage: () => usage ?? { processes: [], machine: { busyPercent: Number.NaN, stealPercent: Number.NaN } },
  };
}

/**
 * Scenario 2 (with 5), in `durations.rounds` rounds: raw BullMQ at 64 in flight on as many worker
 * processes as the service has, then the service at 64 in flight, each sampled for CPU per process, then
 * the bare path (the architecture with none of our work) on as many bare worker processes. The
 * round with the median ratio is reported, with every round's ratio. Memory of the API and workers is
 * sampled over all service parts, warm-ups included (their bursts of 64 connections belong to them).
 */
export async function measureThroughput(
  target: ServiceTarget,
  bookName: string,
  floor: RawFloor,
  processes: ThroughputProcesses,
  durations: Durations,
  barePathUrl: string,
): Promise<ThroughputRun> {
  const { api, workers, stub, redis } = processes;
  const harness = { name: "harness (load generator)", pid: process.pid };
  const redisProcess = redis === undefined ? [] : [{ name: "redis-server", pid: redis.pid }];
  const rawNames = [harness, ...redisProcess, ...floor.workerPids().map((pid, index) => ({ name: `raw worker ${index + 1}`, pid }))];
  const serviceNames = [
    harness,
    ...redisProcess,
    { name: "api", pid: api.pid },
    ...workers.map((worker) => ({ name: worker.name, pid: worker.pid })),
    { name: "stub data source", pid: stub.pid },
  ];
  const memoryPids = [api.pid, ...workers.map((worker) => worker.pid)];
  const memory = new Map<number, ProcessUsage>();

  const rounds: Omit<ThroughputRun, "memory" | "roundRatios">[] = [];
  for (let round = 0; round < durations.rounds; round += 1) {
    const rawSampling = sampling(rawNames);
    const raw = await rawThroughput(floor, durations, rawSampling.measured);
    const serviceSampling = sampling(serviceNames);
    const memorySampler = startProcessSampler(memoryPids);
    let service: HttpLoadResult;
    try {
      service = await throughput(target, bookName, durations, serviceSampling.measured);
    } finally {
      for (const [pid, usage] of memorySampler.stop().processes) memory.set(pid, higherPeak(memory.get(pid), usage));
    }
    const barePath = await barePathThroughput(target, barePathUrl, bookName, durations);
    const rawUsage = rawSampling.usage();
    const serviceUsage = serviceSampling.usage();
    rounds.push({
      workerProcesses: workers.length,
      service,
      raw,
      ratioToRaw: service.throughput / raw.jobsPerSecond,
      barePath,
      barePathRatio: barePath.throughput / raw.jobsPerSecond,
      serviceProcesses: serviceUsage.processes,
      rawProcesses: rawUsage.processes,
      serviceMachine: serviceUsage.machine,
      rawMachine: rawUsage.machine,
    });
  }
  return {
    ...medianItem(rounds, (round) => round.ratioToRaw),
    roundRatios: rounds.map((round) => round.ratioToRaw),
    memory: {
      api: memory.get(api.pid) ?? emptyUsage(),
      worker: largest(workers.map((worker) => memory.get(worker.pid) ?? emptyUsage())),
    },
  };
}

function higherPeak(known: ProcessUsage | undefined, usage: ProcessUsage): ProcessUsage {
  return known === undefined || usage.peakRssMB > known.peakRssMB ? usage : known;
}

function emptyUsage(): ProcessUsage {
  return { peakRssMB: Number.NaN, highWaterMB: Number.NaN, cpuPercent: Number.NaN, cpuSeconds: Number.NaN, samples: 0 };
}

/** The usage of the process with the highest peak RSS. */
function largest(usages: readonly ProcessUsage[]): ProcessUsage {
  return usages.reduce((max, usage) => (usage.peakRssMB > max.peakRssMB || Number.isNaN(max.peakRssMB) ? usage : max), emptyUsage());
}
