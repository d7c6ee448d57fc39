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
 * flow whose parent and children are in different queues; each execution's keys share its id's tag, as
 * do each batch's and each organization's.
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

/** Where a worker stores a finished job's reply, for a caller (of an API before records) that missed the published one. */
export function resultKey(keys: KeySpace, jobId: string): string {
  return `${keys.prefix}:result:${keys.tag(jobId)}`;
}

/** The Pub/Sub channel of one API instance: workers publish the replies of that instance's jobs there. */
export function replyChannel(keys: KeySpace, instanceId: string): string {
  return `${keys.prefix}:reply:${instanceId}`;
}

/*
 * Execution records. Every key of one execution carries its id's tag, so that a script touching several
 * of them stays in one slot of a cluster. The coalescing and idempotency keys name an execution (their
 * value is its id) but are looked up by what the caller sent: they are read and written on their own,
 * never in a script with an execution's keys.
 */

/** An execution's record: organization, status, timestamps and, once it finished, its reply. */
export function executionKey(keys: KeySpace, executionId: string): string {
  return `${keys.prefix}:execution:${keys.tag(executionId)}`;
}

/** The reply channels of the API instances waiting for an execution (its first caller's and its joiners'). */
export function executionWaitersKey(keys: KeySpace, executionId: string): string {
  return `${keys.prefix}:execution:${keys.tag(executionId)}:waiters`;
}

/** Identical requests' one execution: a fingerprint (a SHA-256 in hex) → the execution id. */
export function coalesceKey(keys: KeySpace, fingerprint: string): string {
  return `${keys.prefix}:coalesce:${fingerprint}`;
}

/** An organization's Idempotency-Key (hashed with the organization: a SHA-256 in hex) → the body's hash and an id. */
export function idempotencyKey(keys: KeySpace, scopedKeyHash: string): string {
  return `${keys.prefix}:idempotency:${scopedKeyHash}`;
}

/*
 * Batches. Both keys of one batch carry its id's tag: the script that stores a batch touches only them.
 * Its items are executions, each with its own record (and tag), read beside it but never in a script
 * with it.
 */

/** A batch's record: organization, size, creation time, deadline. */
export function batchKey(keys: KeySpace, batchId: string): string {
  return `${keys.prefix}:batch:${keys.tag(batchId)}`;
}

/** A batch's items in input order: each its execution's id, or the JSON `{ error }` of an invalid input. */
export function batchItemsKey(keys: KeySpace, batchId: string): string {
  return `${keys.prefix}:batch:${keys.tag(batchId)}:items`;
}

/*
 * Per-organization limits. Every key of one organization carries its id's tag: admitting and settling
 * touch only one organization's keys, in one slot.
 */

/**
 * An organization's executions in flight in one lane (`interactive`: callers' own executions;
 * `batch`: async batch items), as a sorted set of execution ids scored by when they stop counting (their
 * deadline): a member nobody removed (an API or worker that died) expires on its own.
 */
export function orgLaneKey(keys: KeySpace, orgId: string, lane: "interactive" | "batch"): string {
  return `${keys.prefix}:org:${keys.tag(orgId)}:${lane}`;
}

/** An organization's executions that finished in the last minute, scored by when: its recent pace, for Retry-After. */
export function orgFinishedKey(keys: KeySpace, orgId: string): string {
  return `${keys.prefix}:org:${keys.tag(orgId)}:finished`;
}
