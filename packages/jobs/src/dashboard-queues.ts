import { Queue } from "bullmq";
import type { Logger } from "pino";
import { keySpace } from "./redis-keys.js";
import { closeConnection, createProducerConnection, withTimeout } from "./redis-connections.js";

/** BullMQ queues to look into (and act on, unless read-only) from an operator's dashboard. */
export interface DashboardQueues {
  /** One per queue a declared job goes through. */
  readonly queues: readonly Queue[];
  close(): Promise<void>;
}

/**
 * Opens the queues it is given (every queue of the service's jobs), on a connection of its own that fails fast like the
 * API's producer (a dashboard page answers an error, never hangs, while Redis is away). Nothing is
 * read until the dashboard asks.
 */
export function openDashboardQueues(options: { redisUrl: string; prefix: string; logger: Logger; queues: readonly string[] }): DashboardQueues {
  const logger = options.logger.child({ component: "dashboard-queues" });
  const connection = createProducerConnection(options.redisUrl, logger);
  const queues = options.queues.map((name) => {
    const queue = new Queue(name, { connection, prefix: keySpace(options.prefix, options.redisUrl).bullPrefix });
    queue.on("error", (error) => logger.warn({ queue: name, err: error }, "queue error"));
    return queue;
  });
  return {
    queues,
    async close() {
      for (const queue of queues) {
        await withTimeout(queue.close(), 2_000, "closing a dashboard queue").catch((error: unknown) =>
          logger.warn({ err: error }, "dashboard queue did not close cleanly"),
        );
      }
      await closeConnection(connection);
    },
  };
}
