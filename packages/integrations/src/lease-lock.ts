import { randomUUID } from "node:crypto";
import type { Cluster, Redis } from "ioredis";

/**
 * KEYS[1] the lock; ARGV[1] its holder's token. Deletes the lock only while that holder has it, in one
 * step: a GET then a DEL would delete another holder's lock taken between them (this one's lease expired).
 * Returns 1 when it deleted it.
 */
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

/** A lock held until its holder releases it or its lease expires (whichever comes first). */
export interface LeaseLock {
  /** Gives the lock up if this holder still has it; false when its lease had expired. */
  release(): Promise<boolean>;
}

/**
 * Takes the lock `key` for `leaseMs`, or undefined when another holder has it. One Redis or a Redis
 * Cluster: single-key commands and scripts only.
 */
export async function takeLeaseLock(redis: Redis | Cluster, key: string, leaseMs: number): Promise<LeaseLock | undefined> {
  const token = randomUUID();
  if ((await redis.set(key, token, "PX", Math.ceil(leaseMs), "NX")) !== "OK") return undefined;
  return { release: async () => (await redis.eval(RELEASE, 1, key, token)) === 1 };
}
