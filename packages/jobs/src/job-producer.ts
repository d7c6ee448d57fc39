import { Queue } from "bullmq";
import type { Logger } from "pino";
import { keySpace } from "./redis-keys.js";
import { jobToAdd, type JobDeclaration } from "./job-declarations.js";
import { closeConnection, createProducerConnection, PRODUCER_COMMAND_TIMEOUT_MS, withTimeout, type RedisConnection } from "./redis-connections.js";

/**
 * A worker's own commands to Redis, outside BullMQ's worker: jobs it adds for later (a batch item's
 * post) and the records of its side effects. Commands fail fast while Redis is away (no offline queue),
 * so that a side effect gives up within its caller's deadline instead of hanging.
 */
export interface JobProducer {
  /** The command connection, for side-effect records (`@pes/integrations`' once-per-key records, pacing). */
  readonly connection: RedisConnection;
  /** Starts connecting; commands fail until Redis answers, then the connection retries by itself. */
  start(): void;
  /**
   * Adds a job of `declaration` with its declared options. With `jobId`, adding a job that is still in the
   * queue (waiting, active, delayed) does nothing: BullMQ keeps the first. Rejects at once while Redis is
   * not connected (BullMQ would wait for it), and after a few seconds without an answer.
   */
  add<Payload>(declaration: JobDeclaration<Payload>, data: Payload, jobId?: string): Promise<void>;
  close(): Promise<void>;
}

/** Builds a producer on a connection of its own; nothing connects before start(). */
export function createJobProducer(options: { redisUrl: string; prefix: string; logger: Logger }): JobProducer {
  const logger = options.logger.child({ component: "job-producer" });
  const connection = createProducerConnection(options.redisUrl, logger);
  const queues = new Map<string, Queue>();

  function queueOf(name: string): Queue {
    let queue = queues.get(name);
    if (queue === undefined) {
      queue = new Queue(name, { connection, prefix: keySpace(options.prefix, options.redisUrl).bullPrefix });
      queue.on("error", (error) => logger.warn({ queue: name, err: error }, "queue error"));
      queues.set(name, queue);
    }
    return queue;
  }

  return {
    connection,
    start() {
      connection.connect().catch(() => {});
    },
    async add(declaration, data, jobId) {
      if (connection.status !== "ready") throw new Error("Redis is unreachable");
      const job = jobToAdd(declaration, data, jobId);
      await withTimeout(queueOf(declaration.queue).add(job.name, job.data, job.opts), PRODUCER_COMMAND_TIMEOUT_MS, `adding a ${declaration.name} job`);
    },
    async close() {
      try {
        await withTimeout(Promise.all([...queues.values()].map((queue) => queue.close())), 2_000, "closing the queues");
      } catch (error) {
        logger.warn({ err: error }, "queues did not close cleanly");
      }
      await closeConnection(connection);
    },
  };
}
