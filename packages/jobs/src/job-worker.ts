import { setMaxListeners } from "node:events";
import { UnrecoverableError, WaitingError, Worker, type Job } from "bullmq";
import type { Logger } from "pino";
import { governBackgroundSlots } from "./background-slots.js";
import type { JobHandler, JobHandlers } from "./job-handlers.js";
import { inJobSpan } from "./job-trace-context.js";
import { keySpace } from "./redis-keys.js";
import { closeConnection, createWorkerConnection, describeRedisUrl, settlesWithin, untilConnected, type RedisConnection } from "./redis-connections.js";

/** The worker side of the queues: runs the jobs it has handlers for and replies to the callers that wait. */
export interface JobWorker {
  /**
   * Connects (waiting out a Redis outage) and starts taking jobs. Rejects with RedisRefusedError when
   * Redis refuses the credentials or the database number, which waiting would not change.
   */
  start(): Promise<void>;
  /**
   * Stops taking jobs and lets the active ones finish. When `timeoutMs` is about to pass, the rest are
   * interrupted (their signal aborts) and handed back to the queue for another worker; Redis goes last.
   */
  close(timeoutMs: number): Promise<void>;
  /** True while it takes jobs: started, its Redis connections up, and not closing. */
  isReady(): boolean;
}

/**
 * How a run of a job ended, for metrics: a `result` (for a job a caller waits for, one without
 * `error`), an `error` (a reply carrying one, a failed attempt, a malformed job), a `timeout` (its
 * caller's deadline, or its attempt's timeout), or `interrupted` by shutdown and handed back.
 */
export type JobOutcome = "result" | "error" | "timeout" | "interrupted";

export interface JobWorkerOptions {
  redisUrl: string;
  /** QUEUE_PREFIX: of the queues (see keySpace). */
  prefix: string;
  logger: Logger;
  /** The jobs this worker runs, each with its handler (handleCatalog): one BullMQ worker per queue they name. */
  handlers: JobHandlers;
  /** Jobs this process runs at once, on each queue of the handlers but those `queueConcurrency` names. */
  concurrency: number;
  /** Jobs this process runs at once on the queues it names, instead of `concurrency`. */
  queueConcurrency?: Readonly<Record<string, number>>;
  /**
   * Queues of background work besides the ones the handlers declare (`background`, `batchLane`), which
   * gives way to the other queues' when this process is short of CPU: each runs up to its concurrency
   * while the event loop has time to spare, and fewer (down to one) while it is busy (governBackgroundSlots).
   */
  backgroundQueues?: readonly string[];
  /** How long a job's lock lives without renewal: a dead worker's job is re-run after about this long. */
  lockDurationMs?: number;
  /** How often this worker looks for jobs whose lock expired (stalled) and puts them back in the queue. */
  stalledIntervalMs?: number;
  /**
   * Told of every run of a job as it ends: the handlers' name for it (`unknown` for a job no entry
   * handles), how it ended and how long it took. For metrics: it must be quick and must not throw.
   */
  onJobFinished?: (jobName: string, outcome: JobOutcome, seconds: number) => void;
  /** Told of a background queue's slots when it starts and whenever they change. For metrics, as `onJobFinished`. */
  onBackgroundSlots?: (queue: string, slots: number) => void;
  /** How the callers of the handlers' awaited jobs are answered; required when the handlers has any. */
  replies?: JobReplies;
}

/**
 * How the callers of awaited jobs are answered, given by the package that owns what those jobs are
 * (@pes/executions answers executions). The worker starts it before it takes jobs and closes it last.
 */
export interface JobReplies {
  start(): Promise<void>;
  isReady(): boolean;
  /** Answers the caller of a job with the handler's value, or the error that ended it; the first answer wins. */
  reply(job: { id: string; data: unknown }, result: object, status: "completed" | "failed"): Promise<void>;
  /** Closes at once (`now`), or after what is under way. */
  close(now?: boolean): Promise<void>;
}

/** BullMQ's defaults, stated: 30 s lock (renewed every 15 s), stalled check every 30 s. */
const DEFAULT_LOCK_DURATION_MS = 30_000;
const DEFAULT_STALLED_INTERVAL_MS = 30_000;
/**
 * A job may stall (its worker died) once and run again; a second stall fails it, so that a job that
 * kills its worker cannot take the whole pool down one worker at a time.
 */
const MAX_STALLED_COUNT = 1;
/** Share of close()'s budget kept for interrupted jobs to hand themselves back. */
const MAX_INTERRUPT_GRACE_MS = 3_000;
/** setTimeout's longest delay; a longer one fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A run stopped at its attempt's timeout: a failed attempt, which BullMQ retries as declared. */
class AttemptTimeoutError extends Error {
  override name = "AttemptTimeoutError";
}

/** Why a running job's signal aborted: its caller's deadline, its attempt's timeout, or shutdown. */
type StopCause = "deadline" | "timeout" | "shutdown";

interface RunningJob {
  readonly controller: AbortController;
  cause?: StopCause;
}

/**
 * Builds a worker over job handlers. For each job it picks the handler by the job's name, parses the
 * payload with the job's schema (a malformed job fails without retry), and runs the handler with a
 * signal of the job's own that aborts at the caller's deadline, at the attempt's timeout, or at shutdown.
 * A failing handler fails the attempt: BullMQ retries it with the job's declared attempts and backoff.
 * For a job a caller waits for it skips a job whose caller stopped waiting, and replies (the handler's
 * value, or an error) in one round trip that stores and publishes it; whatever fails such a job for good
 * (a malformed payload, a bug, its workers dying twice), its caller is told at once rather than at its
 * deadline. Nothing connects before start().
 */
export function createJobWorker(options: JobWorkerOptions): JobWorker {
  const keys = keySpace(options.prefix, options.redisUrl);
  const { replies } = options;
  if (replies === undefined && options.handlers.some((entry) => entry.awaitedAs !== undefined)) {
    throw new Error("handlers of awaited jobs needs the replies that answer their callers");
  }
  const logger = options.logger.child({ component: "job-worker" });
  /** Catalog entries by queue, then by job name. */
  const queues = new Map<string, Map<string, JobHandler>>();
  const background = new Set(options.backgroundQueues);
  for (const entry of options.handlers) {
    for (const queue of entry.batchLane === undefined ? [entry.queue] : [entry.queue, entry.batchLane]) {
      const byName = queues.get(queue) ?? new Map<string, JobHandler>();
      if (byName.has(entry.name)) throw new Error(`job "${entry.name}" is in the handlers twice`);
      byName.set(entry.name, entry);
      queues.set(queue, byName);
    }
    if (entry.background) background.add(entry.queue);
    if (entry.batchLane !== undefined) background.add(entry.batchLane);
  }
  /** The jobs running now, so that close() can interrupt them: a signal per job rather than one for all. */
  const running = new Set<RunningJob>();
  let connection: RedisConnection | undefined;
  let workers: Worker<unknown, void>[] = [];
  const governors: { stop(): void }[] = [];
  /** Jobs of queues other than the background ones: running now, and started so far. */
  let foregroundRunning = 0;
  let foregroundStarts = 0;
  /** Failure notices under way, so that close() lets them go out before it closes the connection. */
  const failureNotices = new Set<Promise<void>>();
  let closing = false;

  /** Answers the caller of an awaited job (JobReplies.reply). */
  async function reply(jobId: string, data: unknown, result: object, status: "completed" | "failed"): Promise<void> {
    if (replies === undefined) throw new Error("no replies for an awaited job");
    await replies.reply({ id: jobId, data }, result, status);
  }

  /**
   * Tells the caller of a job that failed for good why. The one place for every failure, since BullMQ
   * fails some jobs itself: a job whose worker died twice (its lock expired twice) is marked by the
   * stalled checker of any worker and failed, without running, by the worker that takes it next; its
   * 'failed' event fires there, which is where this runs.
   */
  async function replyFailure(label: string, job: Job<unknown, void>, error: Error): Promise<void> {
    const jobId = job.id;
    if (jobId === undefined) return;
    try {
      await reply(jobId, job.data, { error: `${capitalized(label)} failed: ${error.message}` }, "failed");
    } catch (replyError) {
      logger.warn({ jobId, err: replyError }, "could not tell the caller its job failed; it learns at its deadline");
    }
  }

  function stop(job: RunningJob, cause: StopCause): void {
    if (job.cause !== undefined) return;
    job.cause = cause;
    const reasons = { deadline: "its caller's deadline passed", timeout: "its attempt timed out" } as const;
    job.controller.abort(cause === "shutdown" ? "worker shutting down" : new DOMException(reasons[cause], "TimeoutError"));
  }

  /** Runs a job (runJob) and reports how the run ended to onJobFinished. */
  async function runAndReport(entry: JobHandler | undefined, job: Job<unknown, void>, token: string | undefined): Promise<void> {
    const started = performance.now();
    let outcome: JobOutcome = "error";
    try {
      outcome = await runJob(entry, job, token);
    } catch (error) {
      if (error instanceof WaitingError) outcome = "interrupted";
      else if (error instanceof AttemptTimeoutError) outcome = "timeout";
      throw error;
    } finally {
      options.onJobFinished?.(entry?.name ?? "unknown", outcome, (performance.now() - started) / 1_000);
    }
  }

  async function runJob(entry: JobHandler | undefined, job: Job<unknown, void>, token: string | undefined): Promise<JobOutcome> {
    const jobId = job.id;
    if (jobId === undefined) throw new UnrecoverableError("job without an id");
    if (entry === undefined) throw new UnrecoverableError(`no handler for job "${job.name}" in this worker's handlers`);
    const label = entry.awaitedAs ?? entry.name;
    const accepted = entry.accept(job.data);
    if ("problems" in accepted) {
      logger.error({ jobId, job: entry.name, problems: accepted.problems }, "malformed job; failing it without retry");
      // A caller waiting for it learns it from the 'failed' event (replyFailure).
      throw new UnrecoverableError(`malformed ${label} job: ${accepted.problems.join("; ")}`);
    }
    const awaited = entry.awaitedAs !== undefined;
    const deadline = awaited ? deadlineOf(job.data) : Infinity;
    if (Date.now() > deadline) {
      logger.warn({ jobId, job: entry.name }, "job reached a worker after its deadline; not running it");
      await reply(jobId, job.data, { error: `${capitalized(label)} timed out: its deadline passed before a worker could start it` }, "failed");
      return "timeout";
    }

    const self: RunningJob = { controller: new AbortController() };
    // Every running action of the job listens to it: no "possible memory leak" warning past 10 listeners.
    setMaxListeners(0, self.controller.signal);
    const timeoutMs = entry.options.attemptTimeoutMs;
    const timeoutAt = timeoutMs === undefined ? Infinity : Date.now() + timeoutMs;
    // One timer per job, for whichever comes first.
    const stopAt = Math.min(timeoutAt, deadline);
    const timer =
      stopAt === Infinity
        ? undefined
        : setTimeout(() => stop(self, deadline <= timeoutAt ? "deadline" : "timeout"), Math.min(MAX_TIMER_MS, stopAt - Date.now()));
    running.add(self);
    let outcome: { value: object | undefined } | { error: unknown };
    try {
      outcome = { value: await accepted.run({ signal: self.controller.signal, jobId, attempt: job.attemptsMade + 1 }) };
    } catch (error) {
      outcome = { error };
    } finally {
      clearTimeout(timer);
      running.delete(self);
    }

    switch (self.cause) {
      case "shutdown":
        // Whatever came back is partial. Hand the job back so that another worker runs it from the
        // start, now rather than after the lock expires.
        await job.moveToWait(token);
        logger.warn({ jobId, job: entry.name }, "interrupted by shutdown; handed back to the queue");
        throw new WaitingError();
      case "deadline":
        // Its caller has stopped waiting: what came back is partial, and nobody would retry it in time.
        logger.warn({ jobId, job: entry.name }, "stopped at its caller's deadline");
        if (awaited) await reply(jobId, job.data, { error: `${capitalized(label)} timed out: its deadline passed while it ran` }, "failed");
        return "timeout";
      case "timeout":
        throw new AttemptTimeoutError(`${label} attempt timed out after ${timeoutMs} ms`);
      case undefined:
        if ("error" in outcome) {
          // A failed attempt: BullMQ retries it as declared; 'failed' tells a caller after the last one.
          logger.warn({ jobId, job: entry.name, err: outcome.error }, "job handler threw");
          throw outcome.error;
        }
        if (awaited) await reply(jobId, job.data, outcome.value ?? {}, "completed");
        return carriesError(outcome.value) ? "error" : "result";
    }
  }

  function startQueue(queue: string, entries: ReadonlyMap<string, JobHandler>, connection: RedisConnection): Worker<unknown, void> {
    const worker = new Worker<unknown, void>(
      queue,
      // Two parameters: BullMQ creates no AbortController of its own (runJob makes one per job).
      // In the job's consumer span, a child of the enqueuing request's span when the job carries its context.
      background.has(queue)
        ? (job, token) => inJobSpan(queue, job, () => runAndReport(entries.get(job.name), job, token))
        : async (job, token) => {
            foregroundRunning += 1;
            foregroundStarts += 1;
            try {
              await inJobSpan(queue, job, () => runAndReport(entries.get(job.name), job, token));
            } finally {
              foregroundRunning -= 1;
            }
          },
      {
        connection,
        prefix: keys.bullPrefix,
        concurrency: options.queueConcurrency?.[queue] ?? options.concurrency,
        lockDuration: options.lockDurationMs ?? DEFAULT_LOCK_DURATION_MS,
        stalledInterval: options.stalledIntervalMs ?? DEFAULT_STALLED_INTERVAL_MS,
        maxStalledCount: MAX_STALLED_COUNT,
        autorun: false,
      },
    );
    worker.on("error", (error) => logger.warn({ queue, err: error }, "worker error"));
    worker.on("failed", (job, error) => {
      if (job === undefined) {
        logger.warn({ queue, err: error }, "job failed");
        return;
      }
      // BullMQ sets finishedOn only when the job failed for good, not when it will retry it.
      const final = job.finishedOn !== undefined;
      logger.warn({ queue, jobId: job.id, job: job.name, attempt: job.attemptsMade, err: error }, final ? "job failed" : "job attempt failed; retrying");
      const label = entries.get(job.name)?.awaitedAs;
      if (!final || label === undefined) return;
      const notice = replyFailure(label, job, error);
      failureNotices.add(notice);
      void notice.finally(() => failureNotices.delete(notice));
    });
    worker.on("stalled", (jobId) => logger.warn({ queue, jobId }, "job stalled (its worker stopped); back in the queue"));
    worker.run().catch((error: unknown) => logger.error({ queue, err: error }, "worker stopped unexpectedly"));
    return worker;
  }

  return {
    async start() {
      if (connection !== undefined) throw new Error("job worker already started");
      connection = createWorkerConnection(options.redisUrl, logger);
      // Wait out a Redis that is not up yet (BullMQ itself gives up after one failed connect).
      try {
        await Promise.all([untilConnected(connection, options.redisUrl), replies?.start()]);
      } catch (error) {
        connection.disconnect();
        await replies?.close(true);
        throw error;
      }
      const shared = connection;
      workers = [...queues].map(([queue, entries]) => startQueue(queue, entries, shared));
      for (const worker of workers) {
        if (!background.has(worker.name)) continue;
        let startsSeen = foregroundStarts;
        const sawForeground = (): boolean => {
          const seen = foregroundRunning > 0 || foregroundStarts !== startsSeen;
          startsSeen = foregroundStarts;
          return seen;
        };
        options.onBackgroundSlots?.(worker.name, worker.concurrency);
        governors.push(
          governBackgroundSlots(worker.concurrency, sawForeground, (slots) => {
            logger.debug({ queue: worker.name, slots }, "background slots");
            worker.concurrency = slots;
            options.onBackgroundSlots?.(worker.name, slots);
          }),
        );
      }
      await Promise.all(workers.map((worker) => worker.waitUntilReady()));
      logger.info(
        { redis: describeRedisUrl(options.redisUrl), concurrency: options.concurrency, jobs: options.handlers.map((entry) => entry.name) },
        "job worker started",
      );
    },

    isReady() {
      return (
        !closing &&
        workers.length > 0 &&
        connection?.status === "ready" &&
        (replies === undefined || replies.isReady()) &&
        workers.every((worker) => worker.isRunning())
      );
    },

    async close(timeoutMs) {
      closing = true;
      for (const governor of governors) governor.stop();
      if (connection === undefined) return;
      if (workers.length === 0) {
        // Still waiting for Redis in start(): nothing runs yet.
        connection.disconnect();
        await replies?.close(true);
        return;
      }
      const graceful = Promise.all(workers.map((worker) => worker.close()));
      graceful.catch((error: unknown) => logger.warn({ err: error }, "worker did not close cleanly"));
      const interruptGrace = Math.min(MAX_INTERRUPT_GRACE_MS, Math.floor(timeoutMs / 2));
      if (!(await settlesWithin(graceful, timeoutMs - interruptGrace))) {
        logger.warn({ timeoutMs }, "active jobs still running at the shutdown deadline; interrupting them");
        for (const job of running) stop(job, "shutdown");
        if (!(await settlesWithin(graceful, interruptGrace))) {
          // Their locks expire and another worker's stalled checker re-runs them.
          logger.error("interrupted jobs did not stop in time; leaving them to the stalled checker");
          connection.disconnect();
          await replies?.close(true);
          return;
        }
      }
      await settlesWithin(Promise.all(failureNotices), MAX_INTERRUPT_GRACE_MS);
      await Promise.all([closeConnection(connection), replies?.close()]);
    },
  };
}

/**
 * Until when an awaited job's caller waits, read from its payload without its job's schema, so that even
 * a malformed job's caller gets an answer at once. A deadline that cannot be read counts as now.
 */
function deadlineOf(data: unknown): number {
  return typeof data === "object" && data !== null && "deadline" in data && typeof data.deadline === "number" ? data.deadline : Date.now();
}

/** A reply that says the job failed: `{ error: "…" }`, as every failure is replied to a waiting caller. */
function carriesError(value: object | undefined): boolean {
  return value !== undefined && "error" in value && typeof value.error === "string";
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
