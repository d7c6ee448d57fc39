import { parseRedisClusterUrl } from "./redis-url.js";

/**
 * Where the service's data goes in Redis, for one Redis or a Redis Cluster. On a cluster every script
 * and MULTI must touch keys of one hash slot, so keys carry hash tags (the part in braces decides the
 * slot): BullMQ's prefix is one (`{pes}`), which puts every queue in one slot, as BullMQ needs for a
 * flow whose parent and children are in different queues; an organization's executions and batches
 * share its id's tag (@pes/executions).
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
