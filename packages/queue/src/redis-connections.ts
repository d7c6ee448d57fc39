import { Redis, type RedisOptions } from "ioredis";
import type { Logger } from "pino";

/** How long a connection attempt may take before it counts as failed (ioredis' default is 10 s). */
export const CONNECT_TIMEOUT_MS = 2_000;
/** Upper bound for one producer command, so that a Redis that accepts TCP but never answers cannot hang a request. */
export const PRODUCER_COMMAND_TIMEOUT_MS = 5_000;

/** Reconnect quickly (50 ms doubling, capped at 1 s): a restarted Redis should be back in use within a second. */
function retryStrategy(times: number): number {
  return Math.min(50 * 2 ** Math.min(times, 10), 1_000);
}

const common = {
  lazyConnect: true,
  connectTimeout: CONNECT_TIMEOUT_MS,
  retryStrategy,
} satisfies RedisOptions;

/**
 * The API side's command connection (BullMQ Queue, result reads). It fails fast instead of queueing
 * commands while Redis is away, so that the API can answer 503 rather than hang. `connectionName`
 * tells an operator's CLIENT LIST what it is for.
 */
export function createProducerConnection(url: string, logger: Logger, connectionName = "pes:producer"): Redis {
  return withLogging(
    new Redis(url, {
      ...common,
      connectionName,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      commandTimeout: PRODUCER_COMMAND_TIMEOUT_MS,
    }),
    logger.child({ connection: "producer" }),
  );
}

/**
 * The API side's Pub/Sub connection. Subscription is managed by the caller on every `ready` (not by
 * ioredis' autoResubscribe) so that the caller knows when the channel is live again after a drop.
 */
export function createSubscriberConnection(url: string, instanceId: string, logger: Logger): Redis {
  return withLogging(
    new Redis(url, {
      ...common,
      // Named after the instance so that an operator (or a test) can find this instance's subscriber.
      connectionName: `pes:subscriber:${instanceId}`,
      autoResubscribe: false,
      maxRetriesPerRequest: null,
    }),
    logger.child({ connection: "subscriber" }),
  );
}

/**
 * The worker side's connection, shared with BullMQ's Worker (which duplicates it for its blocking
 * fetch). `maxRetriesPerRequest: null` as BullMQ requires: a worker waits out a Redis outage.
 */
export function createWorkerConnection(url: string, logger: Logger): Redis {
  return withLogging(
    new Redis(url, {
      ...common,
      connectionName: "pes:worker",
      maxRetriesPerRequest: null,
    }),
    logger.child({ connection: "worker" }),
  );
}

/**
 * Every connection has an `error` listener (an unhandled one would crash the process) and reports
 * when it loses and regains Redis, once per transition rather than once per retry.
 */
function withLogging(connection: Redis, logger: Logger): Redis {
  let lost = false;
  connection.on("error", (error: Error) => {
    if (!lost) logger.warn({ err: error.message }, "redis connection error");
    lost = true;
  });
  connection.on("ready", () => {
    if (lost) logger.info("redis connection ready again");
    lost = false;
  });
  return connection;
}

/**
 * Redis refused a connection in a way no retry fixes (wrong or missing credentials, a database number
 * it does not have): an operator must correct the Redis URL. The message names the refusal and the
 * server, never the credentials.
 */
export class RedisRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RedisRefusedError";
  }
}

/**
 * True for the errors Redis answers to a connection's set-up that stay the same on every retry:
 * WRONGPASS and NOAUTH (credentials), NOPERM (an ACL user without the right), and SELECT's
 * "DB index is out of range", after which ioredis carries on, silently, with database 0.
 */
export function isRefusal(error: Error): boolean {
  return /^(WRONGPASS|NOAUTH|NOPERM)\b/.test(error.message) || error.message.includes("DB index is out of range");
}

/** Closes a connection without ever waiting on a Redis that is gone. */
export async function closeConnection(connection: Redis): Promise<void> {
  if (connection.status === "end") return;
  if (connection.status !== "ready") {
    connection.disconnect();
    return;
  }
  try {
    await withTimeout(connection.quit(), 1_000, "QUIT");
  } catch {
    connection.disconnect();
  }
}

/** Rejects with a timeout error when `promise` takes longer than `ms`. */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/** The URL without credentials, fit for a log line. */
export function describeRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = "";
    parsed.password = "";
    return parsed.toString();
  } catch {
    return "(unparsable REDIS_URL)";
  }
}
