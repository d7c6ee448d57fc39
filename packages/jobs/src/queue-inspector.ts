import { once } from "node:events";
import { Queue } from "bullmq";
import type { Logger } from "pino";
import { keySpace } from "./redis-keys.js";
import { closeConnection, createProducerConnection, withTimeout, type RedisConnection } from "./redis-connections.js";

/** The job states a queue's depth is reported in. */
const COUNTED_STATES = ["waiting", "prioritized", "active", "delayed", "failed"] as const;
type CountedState = (typeof COUNTED_STATES)[number];

/** One look at a queue. */
export interface QueueDepth {
  queue: string;
  /** Jobs by state: waiting for a worker (and prioritized, if any job has a priority), active, delayed (a retry's backoff), failed (kept an hour). */
  counts: Record<CountedState, number>;
  /** Seconds since the oldest job of the waiting list was added; 0 when none waits. */
  oldestWaitingAgeSeconds: number;
}

/** Reads queue depth for an operator (the API's metrics), over a connection of its own. */
export interface QueueInspector {
  /** One look at each queue; rejects when Redis does not answer within a couple of seconds. */
  read(): Promise<QueueDepth[]>;
  close(): Promise<void>;
}

/** Longest a reading may take, so that a scrape gets its answer (without the queue gauges) in time. */
const READ_TIMEOUT_MS = 2_000;

/**
 * An inspector of `queues`. It connects on the first read, with a
 * connection of its own that fails fast, so that a scrape during a Redis outage neither waits long nor
 * slows the execution client's connection. A reading is two round trips per queue: the counts (one
 * script) and the oldest waiting job (the far end of BullMQ's wait list).
 */
export function createQueueInspector(options: { redisUrl: string; prefix: string; logger: Logger; queues: readonly string[] }): QueueInspector {
  const names = options.queues;
  const logger = options.logger.child({ component: "queue-inspector" });
  let opened: { connection: RedisConnection; queues: Queue[] } | undefined;

  function open(): { connection: RedisConnection; queues: Queue[] } {
    if (opened !== undefined) return opened;
    const connection = createProducerConnection(options.redisUrl, logger, "pes:inspector");
    connection.connect().catch(() => {});
    const queues = names.map((name) => {
      const queue = new Queue(name, { connection, prefix: keySpace(options.prefix, options.redisUrl).bullPrefix });
      queue.on("error", (error) => logger.debug({ queue: name, err: error }, "queue error"));
      return queue;
    });
    opened = { connection, queues };
    return opened;
  }

  async function readQueue(queue: Queue): Promise<QueueDepth> {
    const [counts, [oldest]] = await Promise.all([queue.getJobCounts(...COUNTED_STATES), queue.getWaiting(0, 0)]);
    const now = Date.now();
    const count = (state: CountedState) => counts[state] ?? 0;
    return {
      queue: queue.name,
      counts: {
        waiting: count("waiting"),
        prioritized: count("prioritized"),
        active: count("active"),
        delayed: count("delayed"),
        failed: count("failed"),
      },
      oldestWaitingAgeSeconds: oldest === undefined ? 0 : Math.max(0, (now - oldest.timestamp) / 1_000),
    };
  }

  async function read(): Promise<QueueDepth[]> {
    const { connection, queues } = open();
    if (connection.status !== "ready") await once(connection, "ready", { signal: AbortSignal.timeout(READ_TIMEOUT_MS) });
    return Promise.all(queues.map(readQueue));
  }

  return {
    read: () => withTimeout(read(), READ_TIMEOUT_MS, "reading the queues"),
    async close() {
      if (opened === undefined) return;
      const { connection, queues } = opened;
      await Promise.all(queues.map((queue) => withTimeout(queue.close(), 1_000, "closing a queue").catch(() => {})));
      await closeConnection(connection);
    },
  };
}
