import { slackSignatureKey, type KeySpace, type RedisConnection } from "@pes/jobs";

/** The Slack request signatures already accepted, shared by every API instance (Redis). */
export interface SignatureLedger {
  /** True the first time a signature is seen within `ttlMs`; false for a replay. */
  firstUse(signature: string, ttlMs: number): Promise<boolean>;
}

export function createSignatureLedger(connection: () => RedisConnection, keys: KeySpace): SignatureLedger {
  return {
    async firstUse(signature, ttlMs) {
      // SET NX: of two requests with one signature, however close, exactly one gets "OK".
      return (await connection().set(slackSignatureKey(keys, signature), "1", "PX", ttlMs, "NX")) === "OK";
    },
  };
}
