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
