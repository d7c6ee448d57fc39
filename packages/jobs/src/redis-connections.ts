import { Cluster, Redis, type ClusterOptions, type RedisOptions } from "ioredis";
import type { Logger } from "pino";
import { describeRedisUrl, parseRedisClusterUrl } from "./redis-url.js";

export { describeRedisUrl } from "./redis-url.js";

/** A connection to one Redis or to a Redis Cluster, as REDIS_URL names it; BullMQ takes either. */
export type RedisConnection = Redis | Cluster;

/** How long a connection attempt may take before it counts as failed (ioredis' default is 10 s). */
export const CONNECT_TIMEOUT_MS = 2_000;
/** Upper bound for one producer command, so that a Redis that accepts TCP but never answers cannot hang a request. */
export const PRODUCER_COMMAND_TIMEOUT_MS = 5_000;
/**
 * On a cluster, how often the client reads the slot map again, so that it learns of a failover (and a
 * node gone) even on a connection that sent nothing to the failed node.
 */
const CLUSTER_SLOTS_REFRESH_MS = 5_000;
/**
 * On a cluster, a connection that waits out an outage (`maxRetriesPerRequest: null`) also waits out a
 * failover: a command for a lost master's slots is retried every 300 ms for about 30 s (ioredis' default
 * gives up after 16 tries, 100 ms apart), enough for a replica to take over at the default
 * `cluster-node-timeout` of 15 s. Producers keep the default and fail fast (the API answers 503).
 */
const PATIENT_CLUSTER_RETRIES = { maxRedirections: 100, retryDelayOnFailover: 300, retryDelayOnClusterDown: 300, retryDelayOnTryAgain: 300 };

/** Reconnect quickly (50 ms doubling, capped at 1 s): a restarted Redis should be back in use within a second. */
function retryStrategy(times: number): number {
  return Math.min(50 * 2 ** Math.min(times, 10), 1_000);
}

/** What a connection is for: the options that differ between producers, subscribers and workers. */
type Role = Pick<RedisOptions, "connectionName" | "enableOfflineQueue" | "maxRetriesPerRequest" | "commandTimeout" | "autoResubscribe">;

/**
 * A connection for `url`: one Redis (`redis://`, `rediss://`), or a Redis Cluster
 * (`redis+cluster://host:port,host:port/`), whose node connections take the role's options. Nothing
 * connects before connect() (lazyConnect).
 */
function connectionTo(url: string, role: Role): RedisConnection {
  const cluster = parseRedisClusterUrl(url);
  if (cluster === undefined) return new Redis(url, { lazyConnect: true, connectTimeout: CONNECT_TIMEOUT_MS, retryStrategy, ...role });
  const { enableOfflineQueue, ...perNode } = role;
  const options: ClusterOptions = {
    lazyConnect: true,
    enableReadyCheck: true,
    clusterRetryStrategy: retryStrategy,
    slotsRefreshInterval: CLUSTER_SLOTS_REFRESH_MS,
    ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
    ...(role.maxRetriesPerRequest === null ? PATIENT_CLUSTER_RETRIES : {}),
    redisOptions: {
      connectTimeout: CONNECT_TIMEOUT_MS,
      ...perNode,
      ...(cluster.username === undefined ? {} : { username: cluster.username }),
      ...(cluster.password === undefined ? {} : { password: cluster.password }),
      ...(cluster.tls ? { tls: {} } : {}),
    },
  };
  return new Cluster(cluster.nodes, options);
}

/**
 * The API side's command connection (BullMQ Queue, result reads). It fails fast instead of queueing
 * commands while Redis is away, so that the API can answer 503 rather than hang. `connectionName`
 * tells an operator's CLIENT LIST what it is for.
 */
export function createProducerConnection(url: string, logger: Logger, connectionName = "pes:producer"): RedisConnection {
  return withLogging(
    connectionTo(url, { connectionName, enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: PRODUCER_COMMAND_TIMEOUT_MS }),
    logger.child({ connection: "producer" }),
  );
}

/**
 * The API side's Pub/Sub connection. Subscription is managed by the caller on every `ready` (not by
 * ioredis' autoResubscribe) so that the caller knows when the channel is live again after a drop. On a
 * cluster, ioredis subscribes through one node (a message published on any node reaches every node)
 * and moves the subscription to another node by itself when that one goes.
 */
export function createSubscriberConnection(url: string, instanceId: string, logger: Logger): RedisConnection {
  return withLogging(
    // Named after the instance so that an operator (or a test) can find this instance's subscriber.
    connectionTo(url, { connectionName: `pes:subscriber:${instanceId}`, autoResubscribe: false, maxRetriesPerRequest: null }),
    logger.child({ connection: "subscriber" }),
  );
}

/**
 * The worker side's connection, shared with BullMQ's Worker (which duplicates it for its blocking
 * fetch). `maxRetriesPerRequest: null` as BullMQ requires: a worker waits out a Redis outage.
 */
export function createWorkerConnection(url: string, logger: Logger): RedisConnection {
  return withLogging(connectionTo(url, { connectionName: "pes:worker", maxRetriesPerRequest: null }), logger.child({ connection: "worker" }));
}

/**
 * Every connection has an `error` listener (an unhandled one would crash the process) and reports
 * when it loses and regains Redis, once per transition rather than once per retry.
 */
function withLogging(connection: RedisConnection, logger: Logger): RedisConnection {
  let lost = false;
  connection.on("error", (error: Error) => {
    if (!lost) logger.warn({ err: error }, "redis connection error");
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
export async function closeConnection(connection: RedisConnection): Promise<void> {
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

/** Whether `promise` settles (resolves or rejects) within `ms`: for waits that go on either way, as a close. */
export function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), Math.max(0, ms));
    const done = () => {
      clearTimeout(timer);
      resolve(true);
    };
    promise.then(done, done);
  });
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

/**
 * Resolves once the connection is ready (it retries meanwhile); rejects if it is closed first, or with
 * RedisRefusedError when Redis refuses it for good.
 */
export function untilConnected(connection: RedisConnection, url: string): Promise<void> {
  if (connection.status === "ready") return Promise.resolve();
  return new Promise((resolve, reject) => {
    const settle = (outcome: () => void) => {
      connection.off("ready", onReady);
      connection.off("end", onEnd);
      connection.off("error", onError);
      outcome();
    };
    const onReady = () => settle(resolve);
    const onEnd = () => settle(() => reject(new Error("closed before Redis was reachable")));
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
