import { EVIDENCE_BUNDLE_VERSION, type EvidenceBundle } from "@pes/contracts";
import { startRedis, uniquePrefix, type RedisHandle } from "@pes/local-services";
import { evidenceKey, keySpace } from "@pes/jobs";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createEvidenceStore, EvidenceTooLargeError } from "./evidence-store.js";

let redis: RedisHandle;
let connection: Redis;

beforeAll(async () => {
  redis = await startRedis();
});
afterEach(async () => {
  await connection?.quit();
});
afterAll(async () => {
  await redis.stop();
});

const bundle = {
  v: EVIDENCE_BUNDLE_VERSION,
  executionId: "0b6f2c7e-1c1a-4f2e-9a63-2f0d8f1e9a01",
  recordedAt: "2026-11-20T14:09:00.000Z",
  issue: { bookName: "Checkout latency", time: "2026-11-20T14:08:00.000Z", attributes: { service: "checkout" } },
  actions: [
    {
      gadget: "Changes",
      title: "Last deploy of checkout",
      connector: "http",
      query: { method: "GET", path: "/deploys/checkout", answerField: "version" },
      window: { start: "2026-11-20T13:08:00.000Z", time: "2026-11-20T14:08:00.000Z", end: "2026-11-20T14:23:00.000Z" },
      observation: { kind: "json", answer: { version: "v1.2.3" }, answerField: "version" },
    },
  ],
  mitigations: [{ mitigation: { toolName: "rollback" }, when: { likelyCause: "deploy" }, offered: true }],
} satisfies EvidenceBundle;

describe("createEvidenceStore", () => {
  it("keeps a bundle under its organization's keys for the retention, and reads it back for that organization only", async () => {
    connection = new Redis(redis.url);
    const keys = keySpace(uniquePrefix("evidence"), redis.url);
    const store = createEvidenceStore(() => connection, keys);

    await store.keep("acme", bundle, { retentionDays: 3, maxBytes: 64 * 1024 });

    expect(await store.read("acme", bundle.executionId)).toEqual(bundle);
    expect(await store.read("globex", bundle.executionId)).toBeUndefined();
    expect(await store.read("acme", "another-execution")).toBeUndefined();
    const ttl = await connection.pttl(evidenceKey(keys, "acme", bundle.executionId));
    expect(ttl).toBeGreaterThan(3 * 24 * 3600_000 - 60_000);
    expect(ttl).toBeLessThanOrEqual(3 * 24 * 3600_000);
  });

  it("refuses to keep a bundle over its cap, keeping nothing", async () => {
    connection = new Redis(redis.url);
    const keys = keySpace(uniquePrefix("evidence"), redis.url);
    const store = createEvidenceStore(() => connection, keys);
    const bytes = Buffer.byteLength(JSON.stringify(bundle));
    await expect(store.keep("acme", bundle, { retentionDays: 3, maxBytes: bytes - 1 })).rejects.toThrow(EvidenceTooLargeError);
    expect(await connection.exists(evidenceKey(keys, "acme", bundle.executionId))).toBe(0);
    await store.keep("acme", bundle, { retentionDays: 3, maxBytes: bytes });
    expect(await store.read("acme", bundle.executionId)).toEqual(bundle);
  });

  it("reads a later version's bundle, dropping what it does not know, and refuses what is no bundle", async () => {
    connection = new Redis(redis.url);
    const keys = keySpace(uniquePrefix("evidence"), redis.url);
    const store = createEvidenceStore(() => connection, keys);
    const later = { ...bundle, v: EVIDENCE_BUNDLE_VERSION + 1, signedBy: "a later build" };
    await connection.set(evidenceKey(keys, "acme", bundle.executionId), JSON.stringify(later));
    expect(await store.read("acme", bundle.executionId)).toEqual({ ...bundle, v: EVIDENCE_BUNDLE_VERSION + 1 });
    await connection.set(evidenceKey(keys, "acme", "broken"), JSON.stringify({ v: 1, actions: "none" }));
    expect(await store.read("acme", "broken")).toBeUndefined();
  });
});
