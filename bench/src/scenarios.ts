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
}

export const FULL_DURATIONS: Durations = {
  rounds: 3,
  warmupSeconds: 3,
  latencySeconds: 5,
  latencySliceSeconds: 1,
  throughputSeconds: 10,
  parallelismRequests: 15,
  batchRequests: 10,
};

export const QUICK_DURATIONS: Durations = {
  rounds: 1,
  warmupSeconds: 1,
  latencySeconds: 2,
  latencySliceSeconds: 1,
  throughputSeconds: 2,
  parallelismRequests: 5,
  batchRequests: 4,
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

function executionLoad(target: ServiceTarget, bookName: string) {
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
  /**
   * One bare HTTP round trip (load generator → instant stub), the cost of each of the two HTTP hops
   * the full path adds to the raw floor (client → API, worker → data source).
   */
  httpHop: HttpLoadResult;
  /** The bare path (bare-path.ts) at 1 in flight: the architecture's own floor, zero work of ours. */
  barePath: HttpLoadResult;
}

/** The bare path (bare-path.ts) answers `{ series }` for the same request body as the service. */
function barePathLoad(target: ServiceTarget, barePathUrl: string, bookName: string) {
  return {
    ...executionLoad({ ...target, baseUrl: barePathUrl }, bookName),
    isSuccess: (body: unknown) => typeof body === "object" && body !== null && "series" in body,
  };
}

/**
 * Scenario 1, one round: the raw floor, the full path, one bare HTTP hop and the bare path, each at 1 in
 * flight for `latencySeconds` in all. The round runs them in slices of `latencySliceSeconds`, each
 * slice every path once (the order rotated from slice to slice), and pools each path's latencies: this
 * machine drifts by tens of percent within seconds, and with one path measured whole after the other a
 * round's ratio read anything from 1.06 to 2.54 (BENCHMARKS.md, "Sixth round"); interleaved, every path
 * sees the same drift.
 *
 * When `warmupSeconds` > 0 (the first round) each path is first warmed up for that long at 64 in
 * flight, then as long at 1 in flight: V8 optimizes a function only after it has run a few hundred
 * times, and at 1 in flight a 3 s warm-up left most of the API running unoptimized code (BENCHMARKS.md,
 * "Fifth round"). 64 in flight pushes thousands of executions through every path first, so that each
 * is measured in its steady state.
 */
export async function plumbingOverhead(
  target: ServiceTarget,
  rawFloor: RawFloor,
  bookName: string,
  durations: Pick<Durations, "warmupSeconds" | "latencySeconds" | "latencySliceSeconds">,
  instantStubUrl: string,
  barePathUrl: string,
): Promise<PlumbingResult> {
  const { warmupSeconds, latencySeconds, latencySliceSeconds } = durations;
  const httpPaths = {
    service: executionLoad(target, bookName),
    httpHop: {
      url: `${instantStubUrl}/api/v1/query_range`,
      token: target.token,
      contentType: "application/x-www-form-urlencoded",
      body: new URLSearchParams({ query: "up", start: "1700000000", end: "1700004500", step: "15" }).toString(),
      isSuccess: (body: unknown) => typeof body === "object" && body !== null && "status" in body && body.status === "success",
    },
    barePath: barePathLoad(target, barePathUrl, bookName),
  };
  if (warmupSeconds > 0) {
    const durationMs = warmupSeconds * 1000;
    await rawFloor.sample({ inFlight: THROUGHPUT_IN_FLIGHT, durationMs });
    await rawFloor.sample({ inFlight: 1, durationMs });
    for (const load of Object.values(httpPaths)) {
      await runHttpLoad({ ...load, connections: THROUGHPUT_IN_FLIGHT, durationSeconds: warmupSeconds });
      await runHttpLoad({ ...load, connections: 1, durationSeconds: warmupSeconds });
    }
  }

  const rawSamples: RawFloorSample[] = [];
  const httpSamples = { service: [] as HttpLoadSample[], httpHop: [] as HttpLoadSample[], barePath: [] as HttpLoadSample[] };
  const slices: (() => Promise<void>)[] = [
    async () => {
      rawSamples.push(await rawFloor.sample({ inFlight: 1, durationMs: latencySliceSeconds * 1000 }));
    },
    ...(Object.keys(httpPaths) as (keyof typeof httpPaths)[]).map((path) => async () => {
      httpSamples[path].push(await sampleHttpLoad({ ...httpPaths[path], connections: 1, durationSeconds: latencySliceSeconds }));
    }),
  ];
  const sliceCount = Math.max(1, Math.round(latencySeconds / latencySliceSeconds));
  for (let slice = 0; slice < sliceCount; slice += 1) {
    for (let step = 0; step < slices.length; step += 1) await slices[(slice + step) % slices.length]?.();
  }
  return {
    raw: summarizeRawFloor(rawSamples),
    service: summarizeHttpLoad(httpSamples.service),
    httpHop: summarizeHttpLoad(httpSamples.httpHop),
    barePath: summarizeHttpLoad(httpSamples.barePath),
  };
}

/**
 * Raw BullMQ at 64 in flight: the denominator of scenario 2. `measured` wraps only the measured part
 * (after the warm-up), so that what it samples (CPU, memory) belongs to the measured jobs.
 */
export async function rawThroughput(
  rawFloor: RawFloor,
  durations: Durations,
  measured: <T>(run: () => Promise<T>) => Promise<T>,
): Promise<RawFloorResult> {
  await rawFloor.sample({ inFlight: THROUGHPUT_IN_FLIGHT, durationMs: durations.warmupSeconds * 1000 });
  return measured(() => rawFloor.measure({ inFlight: THROUGHPUT_IN_FLIGHT, durationMs: durations.throughputSeconds * 1000 }));
}

/** Scenario 2: the same playbook at 64 in flight; `measured` wraps the part after the warm-up. */
export async function throughput(
  target: ServiceTarget,
  bookName: string,
  durations: Durations,
  measured: <T>(run: () => Promise<T>) => Promise<T>,
): Promise<HttpLoadResult> {
  const load = executionLoad(target, bookName);
  await runHttpLoad({ ...load, connections: THROUGHPUT_IN_FLIGHT, durationSeconds: durations.warmupSeconds });
  return measured(() => runHttpLoad({ ...load, connections: THROUGHPUT_IN_FLIGHT, durationSeconds: durations.throughputSeconds }));
}

/** Scenario 2's architecture floor: the bare path at 64 in flight, after the same warm-up. */
export async function barePathThroughput(
  target: ServiceTarget,
  barePathUrl: string,
  bookName: string,
  durations: Durations,
): Promise<HttpLoadResult> {
  const load = barePathLoad(target, barePathUrl, bookName);
  await runHttpLoad({ ...load, connections: THROUGHPUT_IN_FLIGHT, durationSeconds: durations.warmupSeconds });
  return runHttpLoad({ ...load, connections: THROUGHPUT_IN_FLIGHT, durationSeconds: durations.throughputSeconds });
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

