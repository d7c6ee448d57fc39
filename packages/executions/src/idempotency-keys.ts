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

/** A key expires between its SET NX and its GET only at the end of its TTL: twice in a row means something is wrong. */
const MAX_CLAIM_ATTEMPTS = 3;

export function createIdempotencyKeys(connection: () => RedisConnection, keys: KeySpace, ttlMs: number): IdempotencyKeys {
  const keyOf = (request: IdempotentRequest) => idempotencyKey(keys, request.orgId, createHash("sha256").update(request.key).digest("hex"));
  return {
    async claim(request, proposedId) {
      const key = keyOf(request);
      // SET NX, then GET what the first request stored: Redis 6.2 has no SET … NX GET (7.0 does). A key
      // that expires between the two is claimed again.
      for (let attempt = 0; attempt < MAX_CLAIM_ATTEMPTS; attempt += 1) {
        if ((await connection().set(key, `${request.requestHash} ${proposedId}`, "PX", Math.ceil(ttlMs), "NX")) === "OK")
          return { id: proposedId, first: true };
        const stored = await connection().get(key);
        if (stored === null) continue;
        const [hash, id] = stored.split(" ");
        if (hash !== request.requestHash || id === undefined) return { mismatch: true };
        return { id, first: false };
      }
      throw new Error("the Idempotency-Key kept expiring while it was claimed");
    },
    async bind(request, id) {
      await connection().set(keyOf(request), `${request.requestHash} ${id}`, "PX", Math.ceil(ttlMs), "XX");
    },
  };
}
