import { PARALLEL_ACTIONS_PER_GADGET, PARALLEL_GADGETS } from "./bench-config.js";
import { runHttpLoad, sampleHttpLoad, summarizeHttpLoad, type HttpLoadResult, type HttpLoadSample } from "./http-load.js";
import { summarizeRawFloor, type RawFloor, type RawFloorResult, type RawFloorSample } from "./raw-floor.js";

/** How long each part runs; `--quick` shrinks everything to stay under a minute. */
export interface Durations {
  /**
   * Scenarios 1 and 2 compare the service with a floor measured beside it. A shared machine drifts over
   * minutes, so each comparison runs this many times, alternating, and the round with the median ratio
   * stands for all (every round's ratio is reported).
   */
  rounds: number;
  /** Before the first round of scenario 1, and before each part of a throughput round. */
  warmupSeconds: number;
  /** Scenario 1: each path's time at 1 in flight per round, … */
  latencySeconds: number;
  /** … run in slices this long, interleaved with the other paths' slices. */
  latencySliceSeconds: number;
  throughputSeconds: number;
  parallelismRequests: number;
  batchRequests: number;
  /** The storm: this many identical requests, started evenly within `stormSpreadMs`, … */
  stormRequests: number;
  stormSpreadMs: number;
  /** … after this many lone requests (the reference for its callers' latency). */
  stormLoneRequests: number;
  /** Webhook intake: notifications of 10 alerts each, sent once and again. */
  webhookNotifications: number;
  asyncBatchItems: number;
  /** The synchronous caller alone, half before the async batch and half after. */
  asyncBatchIdleSeconds: number;
  /** The API's event-loop window of the async batch: from its POST to this long after its 202. */
  asyncBatchEventLoopSeconds: number;
  /** Memory: past executions remembered, then recalls measured one at a time. */
  memoryExecutions: number;
  memoryRecalls: number;
}

export const FULL_DURATIONS: Durations = {
  rounds: 3,
  warmupSeconds: 3,
  latencySeconds: 5,
  latencySliceSeconds: 1,
  throughputSeconds: 10,
  parallelismRequests: 15,
  batchRequests: 10,
  stormRequests: 1_000,
  stormSpreadMs: 1_000,
  stormLoneRequests: 30,
  webhookNotifications: 500,
  asyncBatchItems: 10_000,
  asyncBatchIdleSeconds: 10,
  asyncBatchEventLoopSeconds: 2,
  memoryExecutions: 100_000,
  memoryRecalls: 1_000,
};

export const QUICK_DURATIONS: Durations = {
  rounds: 1,
  warmupSeconds: 1,
  latencySeconds: 2,
  latencySliceSeconds: 1,
  throughputSeconds: 2,
  parallelismRequests: 5,
  batchRequests: 4,
  stormRequests: 100,
  stormSpreadMs: 1_000,
  stormLoneRequests: 10,
  webhookNotifications: 10,
  asyncBatchItems: 200,
  asyncBatchIdleSeconds: 2,
  asyncBatchEventLoopSeconds: 1,
  memoryExecutions: 5_000,
  memoryRecalls: 100,
};

export const THROUGHPUT_IN_FLIGHT = 64;
export const STUB_SLOW_DELAY_MS = 200;
export const BATCH_SIZE = 100;

export interface ServiceTarget {
  baseUrl: string;
  token: string;
}

/** A successful execution result: an object without `error`. */
export function isExecutionSuccess(body: unknown): boolean {
  return typeof body === "object" && body !== null && !Array.isArray(body) && !("error" in body);
}

/** A successful batch: `size` results, none of them `{error}`. */
export function isBatchSuccess(size: number): (body: unknown) => boolean {
  return (body) => Array.isArray(body) && body.length === size && body.every(isExecutionSuccess);
}

/** POST /playbook/execution of `bookName`, as autocannon's load. */
export function executionLoad(target: ServiceTarget, bookName: string) {
  return {
    url: `${target.baseUrl}/playbook/execution`,
    token: target.token,
    body: JSON.stringify({ bookName }),
    isSuccess: isExecutionSuccess,
  };
}

/**
 * One request before any measurement: a broken setup (config, auth, stub) fails here with the
 * service's own answer instead of producing a table of errors.
 */
export async function smokeTest(target: ServiceTarget, bookName: string): Promise<void> {
  const response = await fetch(`${target.baseUrl}/playbook/execution`, {
    method: "POST",
    headers: { authorization: `Bearer ${target.token}`, "content-type": "application/json" },
    body: JSON.stringify({ bookName }),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (response.status !== 200 || !isExecutionSuccess(body)) {
    throw new Error(`smoke test of "${bookName}" failed: ${response.status} ${text.slice(0, 1_000)}`);
  }
}

export interface PlumbingResult {
  raw: RawFloorResult;
  service: HttpLoadResult;
}

/**
 * Scenario 1, one round: the raw floor and the full path, each at 1 in flight for `latencySeconds` in
 * all, in slices of `latencySliceSeconds` taken in turn (the order swapped from slice to slice), each
 * path's latencies pooled over its slices. This host drifts by tens of percent within seconds: with
 * one path measured whole after the other, a round's ratio read anything from 1.06 to 2.54; interleaved,
 * both paths see the same drift.
 *
 * When `warmupSeconds` > 0 (the first round) each path first runs that long at 64 in flight, then as
 * long at 1 in flight: V8 optimizes a function only after hundreds of runs, and the target is about a
 * running service, so both paths are measured in their steady state.
 */
export async function plumbingOverhead(
  target: ServiceTarget,
  rawFloor: RawFloor,
  bookName: string,
  durations: Pick<Durations, "warmupSeconds" | "latencySeconds" | "latencySliceSeconds">,
): Promise<PlumbingResult> {
  const { warmupSeconds, latencySeconds, latencySliceSeconds } = durations;
  const load = executionLoad(target, bookName);
  if (warmupSeconds > 0) {
    const durationMs = warmupSeconds * 1000;
    await rawFloor.sample({ inFlight: THROUGHPUT_IN_FLIGHT, durationMs });
    await rawFloor.sample({ inFlight: 1, durationMs });
    await runHttpLoad({ ...load, connections: THROUGHPUT_IN_FLIGHT, durationSeconds: warmupSeconds });
    await runHttpLoad({ ...load, connections: 1, durationSeconds: warmupSeconds });
  }

  const rawSamples: RawFloorSample[] = [];
  const serviceSamples: HttpLoadSample[] = [];
  const slices = [
    async () => {
      rawSamples.push(await rawFloor.sample({ inFlight: 1, durationMs: latencySliceSeconds * 1000 }));
    },
    async () => {
      serviceSamples.push(await sampleHttpLoad({ ...load, connections: 1, durationSeconds: latencySliceSeconds }));
    },
  ];
  const sliceCount = Math.max(1, Math.round(latencySeconds / latencySliceSeconds));
  for (let slice = 0; slice < sliceCount; slice += 1) {
    for (let step = 0; step < slices.length; step += 1) await slices[(slice + step) % slices.length]?.();
  }
  return { raw: summarizeRawFloor(rawSamples), service: summarizeHttpLoad(serviceSamples) };
}

/** Wraps the measured run of a scenario, not its warm-up (scenario 2 reads CPU times around it). */
export type AroundMeasurement = <T>(run: () => Promise<T>) => Promise<T>;

const unwrapped: AroundMeasurement = (run) => run();

/** Raw BullMQ at 64 in flight after a warm-up: the denominator of scenario 2. */
export async function rawThroughput(rawFloor: RawFloor, durations: Durations, around = unwrapped): Promise<RawFloorResult> {
  await rawFloor.sample({ inFlight: THROUGHPUT_IN_FLIGHT, durationMs: durations.warmupSeconds * 1000 });
  return around(() => rawFloor.measure({ inFlight: THROUGHPUT_IN_FLIGHT, durationMs: durations.throughputSeconds * 1000 }));
}

/** Scenario 2: the one-action playbook at 64 in flight, after a warm-up. */
export async function throughput(target: ServiceTarget, bookName: string, durations: Durations, around = unwrapped): Promise<HttpLoadResult> {
  const load = executionLoad(target, bookName);
  await runHttpLoad({ ...load, connections: THROUGHPUT_IN_FLIGHT, durationSeconds: durations.warmupSeconds });
  return around(() => runHttpLoad({ ...load, connections: THROUGHPUT_IN_FLIGHT, durationSeconds: durations.throughputSeconds }));
}

export interface ParallelismResult {
  requests: HttpLoadResult;
  actions: number;
  stubDelayMs: number;
  medianWallMs: number;
  /** median wall / stub delay: 1.0 is the physical limit. */
  criticalPathRatio: number;
  sequentialSumMs: number;
}

/** Scenario 3: 10 gadgets × 3 actions, each answered after 200 ms; sequential requests, median wall. */
export async function parallelism(target: ServiceTarget, bookName: string, durations: Durations): Promise<ParallelismResult> {
  const load = executionLoad(target, bookName);
  await runHttpLoad({ ...load, connections: 1, amount: 2 });
  const requests = await runHttpLoad({ ...load, connections: 1, amount: durations.parallelismRequests });
  const medianWallMs = requests.latency.p50;
  const actions = PARALLEL_GADGETS * PARALLEL_ACTIONS_PER_GADGET;
  return {
    requests,
    actions,
    stubDelayMs: STUB_SLOW_DELAY_MS,
    medianWallMs,
    criticalPathRatio: medianWallMs / STUB_SLOW_DELAY_MS,
    sequentialSumMs: actions * STUB_SLOW_DELAY_MS,
  };
}

export interface BatchResult {
  requests: HttpLoadResult;
  items: number;
  medianWallMs: number;
  itemsPerSecond: number;
}

/** Scenario 4: one batch of 100 items of scenario 1's playbook at a time; median wall of a few. */
export async function batch(target: ServiceTarget, bookName: string, durations: Durations): Promise<BatchResult> {
  const load = {
    url: `${target.baseUrl}/playbook/execution/batch`,
    token: target.token,
    body: JSON.stringify({ inputList: Array.from({ length: BATCH_SIZE }, () => ({ bookName })) }),
    isSuccess: isBatchSuccess(BATCH_SIZE),
  };
  await runHttpLoad({ ...load, connections: 1, amount: 2 });
  const requests = await runHttpLoad({ ...load, connections: 1, amount: durations.batchRequests });
  const medianWallMs = requests.latency.p50;
  return { requests, items: BATCH_SIZE, medianWallMs, itemsPerSecond: BATCH_SIZE / (medianWallMs / 1000) };
}
