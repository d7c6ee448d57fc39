import { createHash } from "node:crypto";
import { idempotencyKey, type KeySpace, type RedisConnection } from "@pes/jobs";

/**
 * A caller's Idempotency-Key for one request: the organization it is scoped to, the key as sent, and a
 * hash of what was asked (method, path and body), which a retry must repeat.
 */
export interface IdempotentRequest {
  orgId: string;
  key: string;
  requestHash: string;
}

/**
 * What a key stands for: the id of what its first request started (an execution, or later a batch), or
 * `mismatch` when it was used with another request. `first` is true for the request that claimed it.
 */
export type IdempotencyClaim = { id: string; first: boolean } | { mismatch: true };

/**
 * Idempotency-Keys in Redis: each maps to the request's hash and an id for `ttlMs`. The id is chosen
 * before anything is enqueued and claimed with the key, so that a retry (after a 503 whose job was
 * enqueued after all, or concurrently with the first request) names the same execution; creating an
 * execution's record is create-or-join, so both requests end up with one execution.
 */
export interface IdempotencyKeys {
  /** Claims the key for `proposedId`, or reads what it was claimed for. */
  claim(request: IdempotentRequest, proposedId: string): Promise<IdempotencyClaim>;
  /** Points the key at the id its request ended up with (another execution it joined). */
  bind(request: IdempotentRequest, id: string): Promise<void>;
}

export function createIdempotencyKeys(connection: () => RedisConnection, keys: KeySpace, ttlMs: number): IdempotencyKeys {
  const keyOf = (request: IdempotentRequest) => idempotencyKey(keys, request.orgId, createHash("sha256").update(request.key).digest("hex"));
  return {
    async claim(request, proposedId) {
      // Redis 7's SET … NX GET: the value before, and ours set only when there was none.
      const before = await connection().set(keyOf(request), `${request.requestHash} ${proposedId}`, "PX", Math.ceil(ttlMs), "NX", "GET");
      if (before === null) return { id: proposedId, first: true };
      const [hash, id] = before.split(" ");
      if (hash !== request.requestHash || id === undefined) return { mismatch: true };
      return { id, first: false };
    },
    async bind(request, id) {
      await connection().set(keyOf(request), `${request.requestHash} ${id}`, "PX", Math.ceil(ttlMs), "XX");
    },
  };
}
