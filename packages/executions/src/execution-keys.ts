import type { KeySpace } from "@pes/jobs";

/*
 * Where an organization's executions live in Redis. Every key of one organization is below its prefix,
 * which carries the organization's hash tag on a cluster: each transition of an execution (begin, finish,
 * a batch's creation) is one script over one slot. The layout below the prefix is the scripts' (see
 * scripts/*.lua, which build the same names from the prefix); this module is the TypeScript side of it,
 * and nothing else builds these keys.
 *
 *   execution:<id>             hash: status, createdAt, completedAt, queue, coalesce, reuseMs, retainMs, result
 *   execution:<id>:waiters     set: reply channels of the API instances waiting for it
 *   execution:<id>:batches     set: "<batch id> <index>" of the batch items counting on it
 *   coalesce:<fingerprint>     string: the execution identical requests join
 *   lane:interactive, lane:batch  sorted sets: the executions in flight in each lane, scored by deadline
 *   finished                   sorted set: executions finished in the last minute (the pace, for Retry-After)
 *   batch:<id>                 hash: createdAt, deadline, total, begun, done, failed, lastDoneAt
 *   batch:<id>:items           list: the items' execution ids (or an invalid input's `{ error }`) in order
 *   batch:<id>:counted         set: the indexes of the items counted as done
 *   batch:<id>:invalid         hash: an invalid input's index → its `{ error }` JSON
 *   batch:<id>:lost-check      string: held by the one reader looking for a quiet batch's lost items
 *   idempotency:<key hash>     string: an Idempotency-Key's request hash and the id it stands for
 *   evidence:<execution id>    string: the execution's evidence bundle (JSON), for the organization's retention
 *   charts:<execution id>      string: the data of the execution's charts (JSON), as long as its record
 *
 * An organization's executions therefore share one node of a cluster: an organization scales with its
 * node, and organizations spread over the nodes.
 */

/** The prefix of every key of an organization's executions and batches. */
export function organizationPrefix(keys: KeySpace, orgId: string): string {
  return `${keys.prefix}:org:${keys.tag(orgId)}:`;
}

/** An execution's record (see above). */
export function executionKey(keys: KeySpace, orgId: string, executionId: string): string {
  return `${organizationPrefix(keys, orgId)}execution:${executionId}`;
}

/** The reply channels of the API instances waiting for an execution. */
export function executionWaitersKey(keys: KeySpace, orgId: string, executionId: string): string {
  return `${executionKey(keys, orgId, executionId)}:waiters`;
}

/** An organization's executions in flight in a lane, scored by when they stop counting. */
export function laneKey(keys: KeySpace, orgId: string, lane: "interactive" | "batch"): string {
  return `${organizationPrefix(keys, orgId)}lane:${lane}`;
}

/** A batch's record: its size, deadline and progress counters. */
export function batchKey(keys: KeySpace, orgId: string, batchId: string): string {
  return `${organizationPrefix(keys, orgId)}batch:${batchId}`;
}

/** A batch's items in input order. */
export function batchItemsKey(keys: KeySpace, orgId: string, batchId: string): string {
  return `${batchKey(keys, orgId, batchId)}:items`;
}

/** An organization's Idempotency-Key (a SHA-256 in hex of the key as sent) → the body's hash and an id. */
export function idempotencyKey(keys: KeySpace, orgId: string, keyHash: string): string {
  return `${organizationPrefix(keys, orgId)}idempotency:${keyHash}`;
}

/** A batch's invalid inputs, readable before a worker records them in its item list. */
export function batchInvalidKey(keys: KeySpace, orgId: string, batchId: string): string {
  return `${batchKey(keys, orgId, batchId)}:invalid`;
}

/** Held for a while by the one reader that looks for a quiet batch's lost items. */
export function batchLostCheckKey(keys: KeySpace, orgId: string, batchId: string): string {
  return `${batchKey(keys, orgId, batchId)}:lost-check`;
}

/** The Pub/Sub channel of one API instance: workers publish the replies of that instance's executions there. */
export function replyChannel(keys: KeySpace, instanceId: string): string {
  return `${keys.prefix}:reply:${instanceId}`;
}

/** An execution's evidence bundle, kept when the organization asks (evidence-store.ts). */
export function evidenceKey(keys: KeySpace, orgId: string, executionId: string): string {
  return `${organizationPrefix(keys, orgId)}evidence:${executionId}`;
}

/** The data of an execution's charts, kept as long as its record (chart-store.ts). */
export function chartsKey(keys: KeySpace, orgId: string, executionId: string): string {
  return `${organizationPrefix(keys, orgId)}charts:${executionId}`;
}
