import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Queue, QueueEvents } from "bullmq";
import { spawnChild, type ChildHandle } from "./child-processes.js";
import { summarizeLatencies, type LatencySummary } from "./stats.js";
import { waitUntil } from "./wait-until.js";

export interface RawFloorResult {
  inFlight: number;
  workerProcesses: number;
  durationMs: number;
  completed: number;
  errors: number;
  jobsPerSecond: number;
  latency: LatencySummary;
}

/** What one run of the producer loops saw, its latencies not yet summarized: runs can be pooled. */
export interface RawFloorSample {
  inFlight: number;
  workerProcesses: number;
  elapsedMs: number;
  errors: number;
  latencies: number[];
}

export interface RawFloor {
  /** Runs `inFlight` producer loops (add → wait for the result) for `durationMs`. */
  measure(options: { inFlight: number; durationMs: number }): Promise<RawFloorResult>;
  /** The same, not yet summarized (scenario 1 pools short interleaved runs; a warm-up drops it). */
  sample(options: { inFlight: number; durationMs: number }): Promise<RawFloorSample>;
  /** Starts one more worker process on the same queue (for the 2-process denominator). */
  addWorker(): Promise<void>;
  /** The processes the floor runs in: its producer is this process (the harness), its workers children. */
  pids(): { producer: number; workers: number[] };
  close(): Promise<void>;
}

/**
 * The raw floor, in the same run and on the same Redis as the service: Queue.add of a no-op job → a
 * BullMQ Worker in a separate process → the producer sees the result (QueueEvents +
 * job.waitUntilFinished). Its own key prefix, so it shares no keys with the service.
 */
export async function startRawFloor(options: { redisUrl: string; prefix: string; workerConcurrency: number; logDir: string }): Promise<RawFloor> {
  const queueName = "raw-floor";
  const connection = { url: options.redisUrl, maxRetriesPerRequest: null };
  const workers: ChildHandle[] = [];
  const addWorker = async (): Promise<void> => {
    const index = workers.length + 1;
    const logPath = join(options.logDir, `raw-floor-worker-${index}.log`);
    const worker = spawnChild({
      name: `raw-floor-worker-${index}`,
      command: process.execPath,
      args: [fileURLToPath(new URL("./raw-floor-worker.js", import.meta.url))],
      env: {
        ...process.env,
        REDIS_URL: options.redisUrl,
        RAW_PREFIX: options.prefix,
        RAW_QUEUE: queueName,
        RAW_CONCURRENCY: String(options.workerConcurrency),
      },
      logPath,
    });
    workers.push(worker);
    await waitUntil(worker.name, async () => /raw floor worker ready/.test(readFileSync(logPath, "utf8")), {
      timeoutMs: 15_000,
      child: worker,
      logPath,
    });
  };
  const queue = new Queue(queueName, {
    connection,
    prefix: options.prefix,
    // Keep finished jobs a while: waitUntilFinished checks the job's state after subscribing.
    defaultJobOptions: { removeOnComplete: { count: 10_000 }, removeOnFail: { count: 1_000 } },
  });
  const events = new QueueEvents(queueName, { connection, prefix: options.prefix });
  queue.on("error", () => undefined);
  events.on("error", () => undefined);
  // Every waiting job.waitUntilFinished adds listeners to both; 64 in flight is by design.
  queue.setMaxListeners(0);
  events.setMaxListeners(0);
  const close = async (): Promise<void> => {
    await Promise.allSettled([queue.close(), events.close()]);
    for (const worker of workers) await worker.stop();
  };
  try {
    await Promise.all([queue.waitUntilReady(), events.waitUntilReady(), addWorker()]);
  } catch (error) {
    await close();
    throw error;
  }

  const roundTrip = async (): Promise<number> => {
    const start = performance.now();
    const job = await queue.add("noop", {});
    await job.waitUntilFinished(events, 10_000);
    return performance.now() - start;
  };

  const sample = async ({ inFlight, durationMs }: { inFlight: number; durationMs: number }): Promise<RawFloorSample> => {
    const latencies: number[] = [];
    let errors = 0;
    const end = performance.now() + durationMs;
    const loop = async () => {
      while (performance.now() < end) {
        try {
          latencies.push(await roundTrip());
        } catch {
          errors += 1;
        }
      }
    };
    const started = performance.now();
    await Promise.all(Array.from({ length: inFlight }, loop));
    return { inFlight, workerProcesses: workers.length, elapsedMs: performance.now() - started, errors, latencies };
  };

  return {
    measure: async (options) => summarizeRawFloor([await sample(options)]),
    sample,
    addWorker,
    pids: () => ({ producer: process.pid, workers: workers.map((worker) => worker.pid) }),
    close,
  };
}

/** One result from several runs of the raw floor: counts and times added, latencies pooled. */
export function summarizeRawFloor(samples: readonly RawFloorSample[]): RawFloorResult {
  const [first] = samples;
  if (first === undefined) throw new RangeError("summarizeRawFloor of no samples");
  const latencies = samples.flatMap((sample) => sample.latencies);
  const durationMs = samples.reduce((total, sample) => total + sample.elapsedMs, 0);
  return {
    inFlight: first.inFlight,
    workerProcesses: first.workerProcesses,
    durationMs,
    completed: latencies.length,
    errors: samples.reduce((total, sample) => total + sample.errors, 0),
    jobsPerSecond: latencies.length / (durationMs / 1000),
    latency: summarizeLatencies(latencies),
  };
}
