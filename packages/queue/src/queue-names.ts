import { parseRedisClusterUrl } from "./redis-url.js";

/**
 * The one queue every execution goes through. Renaming it strands the jobs already in Redis under the
 * old name (nothing would ever process them): drain the old queue with a worker first.
 */
export const EXECUTION_QUEUE = "playbook-executions";

/**
 * Executions whose issue is a chat message the worker reads (a job without bookName): a queue of their
 * own, so that a worker of the version before, whose execute job requires bookName, never takes one.
 */
export const MESSAGE_EXECUTION_QUEUE = "playbook-message-executions";

/** Posts to chat that nobody waits for (a batch item's reply in its batch's thread). */
export const CHAT_POST_QUEUE = "playbook-chat-posts";

/**
 * Where the service's data goes in Redis, for one Redis or a Redis Cluster. On a cluster every script
 * and MULTI must touch keys of one hash slot, so keys carry hash tags (the part in braces decides the
 * slot): BullMQ's prefix is one (`{pes}`), which puts every queue in one slot, as BullMQ needs for a
 * flow whose parent and children are in different queues; an organization's executions and batches
 * share its id's tag (execution-keys.ts).
 * On one Redis nothing is tagged: the key names stay as they were, so that a rolling deploy's two
 * versions share their queues. Moving to a cluster is a move to another Redis, which starts with empty
 * queues either way (drain the old one first).
 */
export interface KeySpace {
  /** The configured prefix (QUEUE_PREFIX), of the keys and channels that are not tagged. */
  readonly prefix: string;
  /** BullMQ's `prefix` option for every Queue, Worker and FlowProducer. */
  readonly bullPrefix: string;
  /** On a cluster, `{id}`: the hash tag of everything that belongs to that id; else the id. */
  tag(id: string): string;
}

/** The key space of `prefix` on the Redis that `redisUrl` names (a cluster for `redis+cluster://`). */
export function keySpace(prefix: string, redisUrl: string): KeySpace {
  return parseRedisClusterUrl(redisUrl) !== undefined
    ? { prefix, bullPrefix: `{${prefix}}`, tag: (id) => `{${id}}` }
    : { prefix, bullPrefix: prefix, tag: (id) => id };
}

/** The Pub/Sub channel of one API instance: workers publish the replies of that instance's jobs there. */
export function replyChannel(keys: KeySpace, instanceId: string): string {
  return `${keys.prefix}:reply:${instanceId}`;
}
