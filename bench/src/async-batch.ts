import { setTimeout as sleep } from "node:timers/promises";
import { closedLoops, type HttpCaller } from "./http-calls.js";
import { gaugeValue } from "./metric-counter.js";
import { isExecutionSuccess } from "./scenarios.js";
import { summarizeLatencies, type LatencySummary } from "./stats.js";
import { parseOrUndefined } from "./storm.js";

export interface AsyncBatchOptions {
  items: number;
  /** The synchronous caller's time alone, before the batch and again after it (pooled). */
  idleSeconds: number;
  pollIntervalMs: number;
  /** How long the API's event-loop window stays open after the 202 (the batch's items running). */
  eventLoopSecondsAfterAccept: number;
}

export interface SyncLatency {
  latency: LatencySummary;
  failures: number;
  firstFailure: string | undefined;
}

export interface AsyncBatchResult {
  items: number;
  /** POST sent → 202 (the API validating and enqueueing every item). */
  acceptMs: number;
  /** POST sent → the last item done (see `finishedAt`). */
  wallMs: number;
  itemsPerSecond: number;
  /** Items that ended in an error (the progress's `failed`). */
  failedItems: number;
  polls: number;
  /** One synchronous caller, one request at a time, alone … */
  idle: SyncLatency;
  /** … and while the batch runs (the target's figure), … */
  busy: SyncLatency;
  /** … split: requests started before the 202 (the API taking the batch in), and after it (its items running). */
  busyIntake: SyncLatency;
  busyItems: SyncLatency;
  /** Each progress read's answer time (`?limit=0`): a read looks at every item's record. */
  progressReadLatency: LatencySummary;
  p50Ratio: number;
  p99Ratio: number;
  /** The API's event-loop delay from just before the POST to `eventLoopSecondsAfterAccept` after its 202. */
  eventLoopDelay: EventLoopWindow;
}

/** The API's event-loop delay over one window, as its `/metrics` reports it (prom-client's default metrics). */
export interface EventLoopDelay {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface EventLoopWindow extends EventLoopDelay {
  /** From the scrape that opened the window to the one that closed it, as the harness saw them answered. */
  windowMs: number;
}

/**
 * The event-loop delay figures of a scrape of prom-client's default metrics (Node's
 * `monitorEventLoopDelay`, sampled every 10 ms). prom-client resets that histogram on every scrape, so
 * a scrape reports the window since the one before.
 */
export function eventLoopDelayOf(exposition: string): EventLoopDelay {
  const ms = (name: string) => gaugeValue(exposition, name) * 1000;
  return { p50Ms: ms("nodejs_eventloop_lag_p50_seconds"), p99Ms: ms("nodejs_eventloop_lag_p99_seconds"), maxMs: ms("nodejs_eventloop_lag_max_seconds") };
}

/**
 * A pause after the scrape that opens the window: Node's histogram drops the interval in which it was
 * reset, so a stall that began within one sampling interval (10 ms) of the scrape would go unrecorded.
 */
const EVENT_LOOP_SETTLE_MS = 50;

/** One read of the batch's progress, `at` ms after the POST. */
export interface ProgressRead {
  at: number;
  done: number;
  total: number;
  failed: number;
  completed: boolean;
}

/**
 * The async batch: `items` items of the one-action playbook posted with `Prefer: respond-async`, read
 * back (`?limit=0`: progress only) every `pollIntervalMs` until `completed`, while one synchronous
 * caller sends the same playbook one request at a time; the same caller alone before and after gives
 * the idle latencies. Items/s is over the time from the POST to the last item done. The API's `/metrics`
 * is scraped just before the POST and `eventLoopSecondsAfterAccept` after its 202: the second scrape's
 * event-loop delay covers the API taking the batch in and its first seconds running.
 */
export async function asyncBatch(caller: HttpCaller, bookName: string, options: AsyncBatchOptions): Promise<AsyncBatchResult> {
  const syncBody = JSON.stringify({ bookName });
  const syncCall = () => caller.post("/playbook/execution", syncBody);
  const syncFor = (seconds: number) => {
    const until = performance.now() + seconds * 1000;
    return closedLoops(1, syncCall, () => performance.now() >= until);
  };
  const idleBefore = await syncFor(options.idleSeconds / 2);

  // Built before the clock starts: the 202's time is the API's, not the harness's JSON.stringify.
  const batchBody = JSON.stringify({ inputList: Array.from({ length: options.items }, () => ({ bookName })) });

  const scrape = async () => {
    const reply = await caller.get("/metrics");
    if (reply.status !== 200) throw new Error(`async batch: GET /metrics answered ${reply.status} ${reply.body.slice(0, 200)}`);
    return reply;
  };
  const opened = await scrape();
  await sleep(EVENT_LOOP_SETTLE_MS);

  let batchDone = false;
  const busyReplies = closedLoops(1, syncCall, () => batchDone);
  const postedAt = performance.now();
  const readLatencies: number[] = [];
  const accepted = await caller.post("/playbook/execution/batch", batchBody, { prefer: "respond-async" });
  const acceptMs = performance.now() - postedAt;
  const location = accepted.headers.location;
  if (accepted.status !== 202 || typeof location !== "string") {
    batchDone = true;
    await busyReplies;
    throw new Error(`async batch: ${accepted.status} ${accepted.body.slice(0, 500)}`);
  }
  const closing = sleep(options.eventLoopSecondsAfterAccept * 1000).then(scrape);
  // Awaited below; until then a failed scrape must not count as an unhandled rejection.
  closing.catch(() => undefined);
  const progress: ProgressRead[] = [];
  try {
    const deadline = Date.now() + 600_000;
    for (;;) {
      const reply = await caller.get(`${location}?limit=0`);
      readLatencies.push(reply.latencyMs);
      const view = parseOrUndefined(reply.body) as { status?: string; progress?: { total: number; done: number; failed: number } } | undefined;
      if (reply.status !== 200 || view?.progress === undefined) throw new Error(`async batch read: ${reply.status} ${reply.body.slice(0, 500)}`);
      progress.push({ at: performance.now() - postedAt, ...view.progress, completed: view.status === "completed" });
      if (view.status === "completed") break;
      if (Date.now() > deadline) throw new Error(`async batch: ${view.progress.done} of ${view.progress.total} done after 600 s`);
      await sleep(options.pollIntervalMs);
    }
  } finally {
    batchDone = true;
  }
  const busy = await busyReplies;
  const closed = await closing;
  const idleAfter = await syncFor(options.idleSeconds / 2);
  const last = progress[progress.length - 1];
  if (last === undefined || last.total !== options.items) throw new Error(`async batch: read back ${last?.total} items, not ${options.items}`);
  const wallMs = finishedAt(progress);
  const idle = syncLatency([...idleBefore, ...idleAfter]);
  const busyLatency = syncLatency(busy);
  const acceptedAt = postedAt + acceptMs;
  return {
    items: options.items,
    acceptMs,
    wallMs,
    itemsPerSecond: options.items / (wallMs / 1000),
    failedItems: last.failed,
    polls: progress.length,
    idle,
    busy: busyLatency,
    busyIntake: syncLatency(busy.filter((reply) => reply.startedAt < acceptedAt)),
    busyItems: syncLatency(busy.filter((reply) => reply.startedAt >= acceptedAt)),
    progressReadLatency: summarizeLatencies(readLatencies),
    p50Ratio: busyLatency.latency.p50 / idle.latency.p50,
    p99Ratio: busyLatency.latency.p99 / idle.latency.p99,
    eventLoopDelay: { ...eventLoopDelayOf(closed.body), windowMs: closed.startedAt + closed.latencyMs - (opened.startedAt + opened.latencyMs) },
  };
}

/**
 * When the last item was done, from the reads: between the last read that still had items to go and
 * the first that had none, at the pace of the interval before (linear), never after the read that saw
 * it done. Without it, items/s would carry up to a whole poll interval of error.
 */
export function finishedAt(reads: readonly ProgressRead[]): number {
  const end = reads[reads.length - 1];
  const before = reads[reads.length - 2];
  const earlier = reads[reads.length - 3];
  if (end === undefined) return Number.NaN;
  if (before === undefined || earlier === undefined || before.done <= earlier.done) return end.at;
  const pace = (before.done - earlier.done) / (before.at - earlier.at);
  return Math.min(end.at, before.at + (end.total - before.done) / pace);
}

function syncLatency(replies: readonly { status: number; body: string; latencyMs: number }[]): SyncLatency {
  const latencies: number[] = [];
  let firstFailure: string | undefined;
  for (const reply of replies) {
    if (reply.status === 200 && isExecutionSuccess(parseOrUndefined(reply.body))) latencies.push(reply.latencyMs);
    else firstFailure ??= `${reply.status} ${reply.body.slice(0, 500)}`;
  }
  return { latency: summarizeLatencies(latencies), failures: replies.length - latencies.length, firstFailure };
}
