import { setMaxListeners } from "node:events";
import { encodeReply, ExecutionJob, type PlaybookExecutionResult, type WaitingCaller } from "@pes/contracts";
import { UnrecoverableError, WaitingError, Worker, type Job } from "bullmq";
import type { Redis, Result } from "ioredis";
import type { Logger } from "pino";
import { EXECUTION_QUEUE, replyChannel, resultKey } from "./queue-names.js";
import {
  closeConnection,
  createWorkerConnection,
  describeRedisUrl,
  isRefusal,
  RedisRefusedError,
} from "./redis-connections.js";

/** The worker side of the queue: runs execution jobs and replies to the API instance that waits. */
export interface ExecutionWorker {
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
}

export interface ExecutionWorkerOptions {
  redisUrl: string;
  /** BullMQ's key prefix, also used for the result keys and reply channels. */
  prefix: string;
  logger: Logger;
  /** Jobs this process runs at once. */
  concurrency: number;
  /** How long a job's lock lives without renewal: a dead worker's job is re-run after about this long. */
  lockDurationMs?: number;
  /** How often this worker looks for jobs whose lock expired (stalled) and puts them back in the queue. */
  stalledIntervalMs?: number;
  /** Runs one job. It should report failures in the result rather than throw, and stop soon after `signal` aborts. */
  execute: (job: ExecutionJob, signal: AbortSignal) => Promise<PlaybookExecutionResult>;
}

/** BullMQ's defaults, stated: 30 s lock (renewed every 15 s), stalled check every 30 s. */
const DEFAULT_LOCK_DURATION_MS = 30_000;
const DEFAULT_STALLED_INTERVAL_MS = 30_000;
/**
 * A job may stall (its worker died) once and run again; a second stall fails it, so that a job that
 * kills its worker cannot take the whole pool down one worker at a time.
 */
const MAX_STALLED_COUNT = 1;
/** The result key outlives the caller's deadline by this much, for a late look-up. */
const RESULT_TTL_AFTER_DEADLINE_MS = 60_000;
/** Share of close()'s budget kept for interrupted jobs to hand themselves back. */
const MAX_INTERRUPT_GRACE_MS = 3_000;

/**
 * Stores a reply under its result key (with a TTL), then publishes it on the caller's reply channel: one
 * round trip in which the JSON crosses the wire once (a MULTI of SET + PUBLISH sends it twice). The
 * first reply of a job wins: a failure noticed after the job replied (BullMQ could not complete it)
 * never replaces the result, and a re-run's reply never follows the first.
 * KEYS[1] result key; ARGV[1] reply JSON, ARGV[2] TTL in ms, ARGV[3] reply channel.
 */
const STORE_AND_PUBLISH = `if not redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then return -1 end
return redis.call('PUBLISH', ARGV[3], ARGV[1])`;

declare module "ioredis" {
  interface RedisCommander<Context> {
    /**
     * STORE_AND_PUBLISH, defined on the reply connection by start(); resolves with PUBLISH's receiver
     * count, or -1 when the job had replied already.
     */
    storeAndPublish(key: string, json: string, ttlMs: number, channel: string): Result<number, Context>;
  }
}

/**
 * Builds a worker for the execution queue. For each job it parses the payload (a malformed job fails
 * without retry), skips a job whose caller stopped waiting, runs `execute`, then stores and publishes
 * the reply in one round trip. Whatever fails a job (a malformed payload, a bug, a job whose workers
 * died twice), its caller is told at once rather than at its deadline. Nothing connects before start().
 */
export function createExecutionWorker(options: ExecutionWorkerOptions): ExecutionWorker {
  const { prefix } = options;
  const logger = options.logger.child({ component: "execution-worker" });
  /**
   * Aborted when close() runs out of time: every running execution stops and goes back to the queue.
   * One signal for the process rather than BullMQ's per job (a processor with a third parameter gets
   * one): Node 20 builds each AbortSignal with Object.setPrototypeOf, which gives it a hidden class of
   * its own and makes every access to it miss V8's inline caches.
   */
  const interruption = new AbortController();
  // Every running action listens to it: no "possible memory leak" warning past 10 listeners.
  setMaxListeners(0, interruption.signal);
  let connection: Redis | undefined;
  /**
   * Replies go over a connection of their own: BullMQ defines its scripts on the connection it is given,
   * and every pipeline or command object on that connection carries them along (the benchmark profile
   * showed that copying as a tenth of the worker's CPU).
   */
  let replies: Redis | undefined;
  let worker: Worker<unknown, void> | undefined;
  /** Failure notices under way, so that close() lets them go out before it closes the connection. */
  const failureNotices = new Set<Promise<void>>();

  async function reply(jobId: string, caller: WaitingCaller, result: PlaybookExecutionResult): Promise<void> {
    if (replies === undefined) throw new Error("worker not started");
    const { replyTo, deadline } = caller;
    // Encoded once, in the format the job's sender reads; stored before it is published so that a caller
    // who misses the message finds the key.
    const json = encodeReply(jobId, result, caller.v);
    const ttl = Math.max(RESULT_TTL_AFTER_DEADLINE_MS, deadline - Date.now() + RESULT_TTL_AFTER_DEADLINE_MS);
    // ioredis sends EVALSHA and falls back to EVAL on NOSCRIPT (first use, or a restart emptied the cache).
    await replies.storeAndPublish(resultKey(prefix, jobId), json, ttl, replyChannel(prefix, replyTo));
  }

  /**
   * Tells the caller of a failed job why. The one place for every failure, since BullMQ fails some jobs
   * itself: a job whose worker died twice (its lock expired twice) is marked by the stalled checker of
   * any worker and failed, without running, by the worker that takes it next; its 'failed' event fires
   * there, which is where this runs.
   */
  async function replyFailure(job: Job<unknown, void>, error: Error): Promise<void> {
    const jobId = job.id;
    const caller = callerOf(job.data);
    if (jobId === undefined || caller === undefined) return;
    try {
      await reply(jobId, caller, { error: `Execution failed: ${error.message}` });
    } catch (replyError) {
      logger.warn({ jobId, err: errorMessage(replyError) }, "could not tell the caller its job failed; it learns at its deadline");
    }
  }

  async function runJob(job: Job<unknown, void>, token: string | undefined): Promise<void> {
    const jobId = job.id;
    if (jobId === undefined) throw new UnrecoverableError("job without an id");
    const parsed = ExecutionJob.safeParse(job.data);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`);
      const message = `malformed execution job: ${problems.join("; ")}`;
      logger.error({ jobId, problems }, "malformed execution job; failing it without retry");
      // The caller learns it from the 'failed' event (replyFailure).
      throw new UnrecoverableError(message);
    }
    const data = parsed.data;
    if (Date.now() > data.deadline) {
      logger.warn({ jobId, requestId: data.requestId }, "job reached a worker after its deadline; not running it");
      await reply(jobId, data, {
        error: "Execution timed out: its deadline passed before a worker could start it",
      });
      return;
    }
    let result: PlaybookExecutionResult;
    try {
      result = await options.execute(data, interruption.signal);
    } catch (error) {
      // The engine reports failures as results; an exception here is a bug, still answered explicitly.
      logger.error({ jobId, requestId: data.requestId, err: error }, "execution threw");
      result = { error: `Execution failed: ${error instanceof Error ? error.message : String(error)}` };
    }
    if (interruption.signal.aborted) {
      // Shutting down mid-run: whatever came back is partial. Hand the job back so that another worker
      // runs it from the start, now rather than after the lock expires.
      await job.moveToWait(token);
      logger.warn({ jobId, requestId: data.requestId }, "interrupted by shutdown; handed back to the queue");
      throw new WaitingError();
    }
    await reply(jobId, data, result);
  }

  return {
    async start() {
      if (connection !== undefined) throw new Error("execution worker already started");
      connection = createWorkerConnection(options.redisUrl, logger);
      replies = createWorkerConnection(options.redisUrl, logger);
      replies.defineCommand("storeAndPublish", { numberOfKeys: 1, lua: STORE_AND_PUBLISH });
      // Wait out a Redis that is not up yet (BullMQ itself gives up after one failed connect).
      try {
        await Promise.all([untilReady(connection, options.redisUrl), untilReady(replies, options.redisUrl)]);
      } catch (error) {
        connection.disconnect();
        replies.disconnect();
        throw error;
      }
      worker = new Worker<unknown, void>(
        EXECUTION_QUEUE,
        // Two parameters: BullMQ creates no AbortController per job (see `interruption`).
        (job, token) => runJob(job, token),
        {
          connection,
          prefix,
          concurrency: options.concurrency,
          lockDuration: options.lockDurationMs ?? DEFAULT_LOCK_DURATION_MS,
          stalledInterval: options.stalledIntervalMs ?? DEFAULT_STALLED_INTERVAL_MS,
          maxStalledCount: MAX_STALLED_COUNT,
          autorun: false,
        },
      );
      worker.on("error", (error) => logger.warn({ err: error.message }, "worker error"));
      worker.on("failed", (job, error) => {
        logger.warn({ jobId: job?.id, err: error.message }, "job failed");
        if (job === undefined) return;
        const notice = replyFailure(job, error);
        failureNotices.add(notice);
        void notice.finally(() => failureNotices.delete(notice));
      });
      worker.on("stalled", (jobId) => logger.warn({ jobId }, "job stalled (its worker stopped); back in the queue"));
      worker.run().catch((error: unknown) => logger.error({ err: error }, "worker stopped unexpectedly"));
      await worker.waitUntilReady();
      logger.info({ redis: describeRedisUrl(options.redisUrl), concurrency: options.concurrency }, "execution worker started");
    },

    async close(timeoutMs) {
      if (connection === undefined || replies === undefined) return;
      if (worker === undefined) {
        // Still waiting for Redis in start(): nothing runs yet.
        connection.disconnect();
        replies.disconnect();
        return;
      }
      const graceful = worker.close();
      graceful.catch((error: unknown) => logger.warn({ err: error }, "worker did not close cleanly"));
      const interruptGrace = Math.min(MAX_INTERRUPT_GRACE_MS, Math.floor(timeoutMs / 2));
      if (!(await settlesWithin(graceful, timeoutMs - interruptGrace))) {
        logger.warn({ timeoutMs }, "active jobs still running at the shutdown deadline; interrupting them");
        interruption.abort("worker shutting down");
        if (!(await settlesWithin(graceful, interruptGrace))) {
          // Their locks expire and another worker's stalled checker re-runs them.
          logger.error("interrupted jobs did not stop in time; leaving them to the stalled checker");
          connection.disconnect();
          replies.disconnect();
          return;
        }
      }
      await settlesWithin(Promise.all(failureNotices), MAX_INTERRUPT_GRACE_MS);
      await Promise.all([closeConnection(connection), closeConnection(replies)]);
    },
  };
}

/**
 * Resolves once the connection is ready (it retries meanwhile); rejects if it is closed first, or with
 * RedisRefusedError when Redis refuses it for good.
 */
function untilReady(connection: Redis, url: string): Promise<void> {
  if (connection.status === "ready") return Promise.resolve();
  return new Promise((resolve, reject) => {
    const settle = (outcome: () => void) => {
      connection.off("ready", onReady);
      connection.off("end", onEnd);
      connection.off("error", onError);
      outcome();
    };
    const onReady = () => settle(resolve);
    const onEnd = () => settle(() => reject(new Error("worker closed before Redis was reachable")));
    const onError = (error: Error) => {
      // Only the message: ioredis attaches the refused command, whose arguments hold the password.
      if (!isRefusal(error)) return;
      settle(() =>
        reject(
          new RedisRefusedError(
            `Redis at ${describeRedisUrl(url)} refused the connection: ${error.message}\n` +
              "Retrying cannot fix this: check the password, user and database number in the Redis URL.",
          ),
        ),
      );
    };
    connection.on("ready", onReady);
    connection.on("end", onEnd);
    connection.on("error", onError);
    if (connection.status === "wait") connection.connect().catch(() => {});
  });
}

/** True when `promise` settles within `ms`. */
function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), Math.max(0, ms));
    const done = () => {
      clearTimeout(timer);
      resolve(true);
    };
    promise.then(done, done);
  });
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Where and until when a caller waits, read from a payload without the job's schema, so that even a
 * malformed job's caller gets an answer. A deadline that cannot be read counts as now.
 */
function callerOf(data: unknown): WaitingCaller | undefined {
  if (typeof data !== "object" || data === null || !("replyTo" in data)) return undefined;
  const { replyTo } = data;
  if (typeof replyTo !== "string" || replyTo === "") return undefined;
  const deadline = "deadline" in data && typeof data.deadline === "number" ? data.deadline : Date.now();
  const v = "v" in data && typeof data.v === "number" ? data.v : undefined;
  return v === undefined ? { replyTo, deadline } : { v, replyTo, deadline };
}
