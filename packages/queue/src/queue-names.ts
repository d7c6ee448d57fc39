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

/** Where a worker stores a finished job's reply, for a caller that missed the published one. */
export function resultKey(prefix: string, jobId: string): string {
  return `${prefix}:result:${jobId}`;
}

/** The Pub/Sub channel of one API instance: workers publish the replies of that instance's jobs there. */
export function replyChannel(prefix: string, instanceId: string): string {
  return `${prefix}:reply:${instanceId}`;
}

/*
 * Execution records. Every key of one execution is built from its id alone (one hash tag per execution
 * once Redis Cluster is supported), so that a script touching several of them stays on one slot. The
 * coalescing and idempotency keys name an execution (their value is its id) but are looked up by what
 * the caller sent: they are read and written on their own, never in a script with an execution's keys.
 */

/** An execution's record: organization, status, timestamps and, once it finished, its reply. */
export function executionKey(prefix: string, executionId: string): string {
  return `${prefix}:execution:${executionId}`;
}

/** The reply channels of the API instances waiting for an execution (its first caller's and its joiners'). */
export function executionWaitersKey(prefix: string, executionId: string): string {
  return `${prefix}:execution:${executionId}:waiters`;
}

/** Identical requests' one execution: a fingerprint (a SHA-256 in hex) → the execution id. */
export function coalesceKey(prefix: string, fingerprint: string): string {
  return `${prefix}:coalesce:${fingerprint}`;
}

/** An organization's Idempotency-Key (hashed with the organization: a SHA-256 in hex) → the body's hash and an id. */
export function idempotencyKey(prefix: string, scopedKeyHash: string): string {
  return `${prefix}:idempotency:${scopedKeyHash}`;
}

/*
 * Batches. Both keys of one batch are built from its id alone (one hash tag per batch once Redis Cluster
 * is supported): the script that stores a batch touches only them. Its items are executions, each with
 * its own record, read beside it but never in a script with it.
 */

/** A batch's record: organization, size, creation time, deadline. */
export function batchKey(prefix: string, batchId: string): string {
  return `${prefix}:batch:${batchId}`;
}

/** A batch's items in input order: each its execution's id, or the JSON `{ error }` of an invalid input. */
export function batchItemsKey(prefix: string, batchId: string): string {
  return `${prefix}:batch:${batchId}:items`;
}

/*
 * Per-organization limits. Every key of one organization is built from its id alone (one hash tag per
 * organization once Redis Cluster is supported): admitting and settling touch only one organization's.
 */

/**
 * An organization's executions in flight in one lane (`interactive`: callers' own executions;
 * `batch`: async batch items), as a sorted set of execution ids scored by when they stop counting (their
 * deadline): a member nobody removed (an API or worker that died) expires on its own.
 */
export function orgLaneKey(prefix: string, orgId: string, lane: "interactive" | "batch"): string {
  return `${prefix}:org:${orgId}:${lane}`;
}

/** An organization's executions that finished in the last minute, scored by when: its recent pace, for Retry-After. */
export function orgFinishedKey(prefix: string, orgId: string): string {
  return `${prefix}:org:${orgId}:finished`;
}
