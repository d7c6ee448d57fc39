import type { BatchItemStatus, BatchStatus, PlaybookExecutionResult } from "@pes/contracts";
import { ApiError, InvalidResponseError, TimeoutError, UnreachableError } from "./client-errors.js";
import type { PesClient } from "./pes-client.js";
import { backoffMs, isRetryableStatus } from "./retry-policy.js";

/** One finished item of a batch: `result` is its PlaybookExecutionResult, or `{ error }` when it failed. */
export interface BatchItemResult {
  /** Its position in the batch's inputList. */
  index: number;
  status: "completed" | "failed";
  executionId?: string;
  result: PlaybookExecutionResult;
}

/** A connection that broke and is about to be tried again. */
export interface BatchReconnect {
  /** Failures in a row so far, this one included (from 1). */
  attempt: number;
  waitMs: number;
  error: unknown;
}

export interface BatchResultsOptions {
  /** The index of the first result wanted (default 0): where a caller that stopped resumes. */
  from?: number;
  signal?: AbortSignal;
  /** Failed connections in a row (the stream's or a read's) before giving up (default 8: about 40 s of waits). */
  reconnectAttempts?: number;
  /** Told the batch's progress (no items) whenever it grew, from the stream or a page read. */
  onProgress?: (status: BatchStatus) => void;
  /** Told before each wait to reconnect. */
  onReconnect?: (reconnect: BatchReconnect) => void;
  /** Items per read, 1 to 1,000 (default 1,000, the API's largest page). */
  pageSize?: number;
  /**
   * Longest wait between two reads while the stream is quiet (default 10 s): a safety net for a change
   * the stream did not show (it reports counts, and the next item may finish without moving them).
   */
  recheckMs?: number;
}

const DEFAULT_RECONNECT_ATTEMPTS = 8;
const MAX_PAGE = 1_000;
const DEFAULT_RECHECK_MS = 10_000;

type Sleep = (ms: number, signal: AbortSignal) => Promise<void>;

/**
 * What {@link PesClient.batchResults} yields: the batch's results in input order from `from`. A page is
 * read from the first result not yet yielded; its finished items up to the first unfinished one are
 * yielded; then it waits for the progress stream to say that more items finished (or the batch
 * completed) and reads again. Progress only grows, so a wait for "more than the page saw" cannot miss
 * a change that came in between.
 */
export async function* followBatchResults(
  client: Pick<PesClient, "readBatch" | "batchEvents">,
  batchId: string,
  options: BatchResultsOptions & { sleep: Sleep },
): AsyncGenerator<BatchItemResult, void, undefined> {
  const { from = 0, signal, onProgress, onReconnect, sleep } = options;
  const attempts = options.reconnectAttempts ?? DEFAULT_RECONNECT_ATTEMPTS;
  const pageSize = options.pageSize ?? MAX_PAGE;
  const recheckMs = options.recheckMs ?? DEFAULT_RECHECK_MS;
  if (!Number.isInteger(from) || from < 0) throw new RangeError(`from must be a non-negative integer, got ${from}`);
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE) throw new RangeError(`pageSize must be 1 to ${MAX_PAGE}, got ${pageSize}`);

  const stop = new AbortController();
  const stopSignal = signal === undefined ? stop.signal : AbortSignal.any([signal, stop.signal]);
  const progress = watchProgress(client, batchId, { signal: stopSignal, attempts, sleep, onReconnect }, (status) => onProgress?.({ ...status, items: [] }));

  /** A page from `offset`, reconnecting as the stream does. */
  async function readPage(offset: number): Promise<BatchStatus> {
    for (let failures = 1; ; failures += 1) {
      try {
        return await client.readBatch(batchId, { offset, limit: pageSize, ...(signal === undefined ? {} : { signal }) });
      } catch (error) {
        if (stopSignal.aborted || !isReconnectable(error) || failures > attempts) throw error;
        const waitMs = backoffMs(failures);
        onReconnect?.({ attempt: failures, waitMs, error });
        await sleep(waitMs, stopSignal);
      }
    }
  }

  try {
    let next = from;
    for (;;) {
      const page = await readPage(next);
      progress.saw(page);
      const { total } = page.progress;
      if (next > total) throw new RangeError(`from is ${from}, but batch ${batchId} has ${total} items`);
      let unfinished = false;
      for (const item of page.items) {
        if (item.index !== next) throw new InvalidResponseError(200, { index: item.index }, `item ${next} expected, got ${item.index}`);
        const finished = finishedResult(item);
        if (finished === undefined) {
          unfinished = true;
          break;
        }
        yield finished;
        next += 1;
      }
      if (next >= total) return;
      // A page of finished items only: the next one may be finished too.
      if (!unfinished && page.items.length > 0) continue;
      if (page.status === "completed") throw new InvalidResponseError(200, { index: next }, `the batch completed but item ${next} did not finish`);
      await progress.beyond(page.progress.done, recheckMs);
    }
  } finally {
    stop.abort();
  }
}

function finishedResult(item: BatchItemStatus): BatchItemResult | undefined {
  if (item.status !== "completed" && item.status !== "failed") return undefined;
  if (item.result === undefined) throw new InvalidResponseError(200, item, `item ${item.index} is ${item.status} without a result`);
  return { index: item.index, status: item.status, ...(item.executionId === undefined ? {} : { executionId: item.executionId }), result: item.result };
}

/**
 * Worth connecting again: no answer, no answer in time, or an answer that says "later" (429, 503; 502
 * and 504 from a gateway that lost the API). Every request here is a read: sending it again is harmless.
 */
function isReconnectable(error: unknown): boolean {
  if (error instanceof UnreachableError || error instanceof TimeoutError) return true;
  return error instanceof ApiError && (isRetryableStatus(error.status) || error.status === 502 || error.status === 504);
}

function newer(status: BatchStatus, than: BatchStatus): boolean {
  const [a, b] = [status.progress, than.progress];
  if (a.done !== b.done) return a.done > b.done;
  if (a.failed !== b.failed) return a.failed > b.failed;
  return status.status === "completed" && than.status !== "completed";
}

interface ProgressWatch {
  /** Progress seen elsewhere (a page read): reported, and counted as known. */
  saw(status: BatchStatus): void;
  /**
   * Resolves once more than `done` items finished or the batch completed, or after `recheckMs` at
   * most; rejects with the stream's error when it gave up reconnecting.
   */
  beyond(done: number, recheckMs: number): Promise<void>;
}

/**
 * The batch's progress stream, connected again (after a growing wait) whenever it breaks, until the
 * batch completed or `signal` aborts. A stream that ended before `completed` (the API restarting) is
 * a failure too; an event resets the count of failures.
 */
function watchProgress(
  client: Pick<PesClient, "batchEvents">,
  batchId: string,
  options: { signal: AbortSignal; attempts: number; sleep: Sleep; onReconnect: ((reconnect: BatchReconnect) => void) | undefined },
  report: (status: BatchStatus) => void,
): ProgressWatch {
  const { signal, attempts, sleep, onReconnect } = options;
  let latest: BatchStatus | undefined;
  let failure: { error: unknown } | undefined;
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const waiter of [...waiters]) waiter();
  };
  const see = (status: BatchStatus) => {
    // Progress only grows, but a page read and the stream may tell it out of order: the older is dropped.
    if (latest !== undefined && !newer(status, latest)) return;
    latest = status;
    report(status);
    wake();
  };

  void (async () => {
    for (let failures = 0; ; ) {
      let error: unknown;
      try {
        for await (const status of client.batchEvents(batchId, { signal })) {
          failures = 0;
          see(status);
          if (status.status === "completed") return;
        }
        error = new InvalidResponseError(200, undefined, "the progress stream ended before the batch completed");
      } catch (thrown) {
        if (signal.aborted) return;
        if (!isReconnectable(thrown)) throw thrown;
        error = thrown;
      }
      failures += 1;
      if (failures > attempts) throw error;
      const waitMs = backoffMs(failures);
      onReconnect?.({ attempt: failures, waitMs, error });
      await sleep(waitMs, signal);
    }
  })().catch((error: unknown) => {
    if (signal.aborted) return;
    failure = { error };
    wake();
  });

  return {
    saw: see,
    beyond(done, recheckMs) {
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (failure !== undefined) return finish(() => reject(failure?.error));
          if (signal.aborted) return finish(() => reject(signal.reason));
          if (latest !== undefined && (latest.progress.done > done || latest.status === "completed")) return finish(resolve);
        };
        const timer = setTimeout(() => finish(resolve), recheckMs);
        const finish = (settle: () => void) => {
          clearTimeout(timer);
          waiters.delete(check);
          signal.removeEventListener("abort", check);
          settle();
        };
        waiters.add(check);
        signal.addEventListener("abort", check);
        check();
      });
    },
  };
}
