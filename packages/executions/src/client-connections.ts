import type { StartBatchJob } from "@pes/contracts";
import { closeConnection, createProducerConnection, createSubscriberConnection, withTimeout, type KeySpace, type RedisConnection } from "@pes/jobs";
import { Queue } from "bullmq";
import type { Logger } from "pino";
import { openExecutionQueues, type ExecutionQueues } from "./execution-enqueue.js";
import { START_BATCH_JOB } from "./execution-jobs.js";
import { defineLifecycleCommands } from "./execution-lifecycle.js";
import { errorResult } from "./execution-status.js";
import { ReplyListener } from "./reply-listener.js";

/** The client's connections, queues and reply listener, from start() on. */
export interface Connected {
  producer: RedisConnection;
  /** Records, coalescing and idempotency keys: a connection without BullMQ's scripts (see defineLifecycleCommands). */
  records: RedisConnection;
  subscriber: RedisConnection;
  /** One per job type's queue, and the one behind every other caller's work. */
  queues: ExecutionQueues;
  /** Where accepted async batches wait for a worker to begin their items (START_BATCH_JOB). */
  starts: Queue<StartBatchJob>;
  listener: ReplyListener;
}

/** Where the client connects, as whom. */
export interface ConnectionSetup {
  redisUrl: string;
  prefix: string;
  keys: KeySpace;
  instanceId: string;
  /** This instance's reply channel. */
  channel: string;
  logger: Logger;
}

/** Opens the connections (ioredis retries failed attempts by itself), the queues and the reply listener. */
export function connect(setup: ConnectionSetup, notifyReadiness: () => void): Connected {
  const { redisUrl, prefix, keys, channel, logger } = setup;
  const producer = createProducerConnection(redisUrl, logger);
  const records = createProducerConnection(redisUrl, logger, "pes:records");
  defineLifecycleCommands(records);
  const subscriber = createSubscriberConnection(redisUrl, setup.instanceId, logger);
  const listener = new ReplyListener({ subscriber, records, keys, channel, logger, onSubscribed: notifyReadiness });
  listener.listen();
  records.on("ready", () => {
    notifyReadiness();
    // After a Redis restart the subscriber may have resubscribed first, when its sweep could not read.
    if (listener.subscribed) void listener.sweep();
  });
  producer.on("ready", notifyReadiness);
  for (const connection of [producer, records, subscriber]) connection.connect().catch(() => {});
  const starts = new Queue<StartBatchJob>(START_BATCH_JOB.queue, { connection: producer, prefix: keys.bullPrefix });
  starts.on("error", (error) => logger.warn({ queue: START_BATCH_JOB.queue, err: error }, "queue error"));
  return { producer, records, subscriber, queues: openExecutionQueues(producer, { redisUrl, prefix, logger }), starts, listener };
}

/** Answers the callers still waiting, then closes the queues and the connections. */
export async function disconnect(connected: Connected, logger: Logger): Promise<void> {
  connected.listener.settleAll(errorResult("Service is shutting down"));
  const { queues, starts } = connected;
  try {
    await withTimeout(Promise.all([queues.execute.close(), queues.message.close(), queues.behind.close(), starts.close()]), 2_000, "closing the queues");
  } catch (error) {
    logger.warn({ err: error }, "queues did not close cleanly");
  }
  await Promise.all([connected.producer, connected.records, connected.subscriber].map(closeConnection));
}

/** True when every connection is up and the reply channel is subscribed: a job could be enqueued and its reply received. */
export function isConnected(connected: Connected): boolean {
  const { producer, records, subscriber, listener } = connected;
  return producer.status === "ready" && records.status === "ready" && subscriber.status === "ready" && listener.subscribed;
}

/** Waits until `isReady()` (checked on each readiness change), or `ms` passed. */
export function untilReady(readiness: Set<() => void>, isReady: () => boolean, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (ready: boolean) => {
      clearTimeout(timer);
      readiness.delete(check);
      resolve(ready);
    };
    const check = () => {
      if (isReady()) done(true);
    };
    const timer = setTimeout(() => done(isReady()), ms);
    readiness.add(check);
    check();
  });
}
