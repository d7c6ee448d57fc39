import type { FeedbackEntry } from "@pes/contracts";
import { evidenceKey, executionKey, feedbackIndexKey, feedbackKey, keySpace, type KeySpace } from "@pes/jobs";
import { startRedis, uniquePrefix, type RedisHandle } from "@pes/local-services";
import { Redis } from "ioredis";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createFeedbackStore, FEEDBACK_HISTORY_MAX, type FeedbackStore } from "./feedback-store.js";

let redis: RedisHandle;
let connection: Redis;
let keys: KeySpace;
let store: FeedbackStore;

const E1 = "0b6f2c7e-1c1a-4f2e-9a63-2f0d8f1e9a01";
const E2 = "1c7a3d8f-2d2b-4a3f-8b74-3a1e9f2fab02";
const E3 = "2d8b4e9a-3e3c-4b4a-9c85-4b2fa03abc03";
const HOUR = 3_600_000;

const right = (at: string, subject = "alice"): FeedbackEntry => ({ verdict: "right", by: { via: "api", subject }, at });
const wrong = (at: string): FeedbackEntry => ({
  verdict: "wrong",
  cause: { kind: "deploy", subject: "payments" },
  resolution: "Rolled payments back to v2.3.0",
  by: { via: "slack", subject: "U0123", name: "bob" },
  at,
});

/** An execution record as the lifecycle leaves it (its fields do not matter here, its life does). */
async function execution(orgId: string, executionId: string, ttlMs: number): Promise<void> {
  await connection.hset(executionKey(keys, orgId, executionId), "status", "completed");
  await connection.pexpire(executionKey(keys, orgId, executionId), ttlMs);
}

beforeAll(async () => {
  redis = await startRedis();
  connection = new Redis(redis.url);
});
beforeEach(() => {
  keys = keySpace(uniquePrefix("feedback"), redis.url);
  store = createFeedbackStore(() => connection, keys);
});
afterAll(async () => {
  connection.disconnect();
  await redis.stop();
});

describe("createFeedbackStore", () => {
  it("keeps one current answer per execution and every answer in its history, oldest first", async () => {
    await execution("acme", E1, HOUR);
    expect(await store.record("acme", E1, right("2026-11-21T14:00:00.000Z"))).toBe(true);
    expect(await store.record("acme", E1, wrong("2026-11-21T14:05:00.000Z"))).toBe(true);

    const read = await store.read("acme", E1);
    expect(read).toEqual({
      executionId: E1,
      current: wrong("2026-11-21T14:05:00.000Z"),
      history: [right("2026-11-21T14:00:00.000Z"), wrong("2026-11-21T14:05:00.000Z")],
    });
  });

  it("records nothing for an unknown execution or another organization's, and reads none there", async () => {
    await execution("acme", E1, HOUR);
    expect(await store.record("globex", E1, right("2026-11-21T14:00:00.000Z"))).toBe(false);
    expect(await store.record("acme", E2, right("2026-11-21T14:00:00.000Z"))).toBe(false);
    expect(await connection.exists(feedbackKey(keys, "globex", E1), feedbackKey(keys, "acme", E2), feedbackIndexKey(keys, "globex"))).toBe(0);
    await store.record("acme", E1, right("2026-11-21T14:00:00.000Z"));
    expect(await store.read("globex", E1)).toBeUndefined();
    expect((await store.confirmationsOf("globex", [E1])).size).toBe(0);
  });

  it("lives as long as the execution's record or its evidence bundle, whichever lives longer", async () => {
    await execution("acme", E1, HOUR);
    await store.record("acme", E1, right("2026-11-21T14:00:00.000Z"));
    const ttl = await connection.pttl(feedbackKey(keys, "acme", E1));
    expect(ttl).toBeGreaterThan(HOUR - 60_000);
    expect(ttl).toBeLessThanOrEqual(HOUR);

    // An execution whose record is gone but whose bundle is kept (for days) still takes feedback.
    await connection.set(evidenceKey(keys, "acme", E2), "{}", "PX", 7 * 24 * HOUR);
    expect(await store.record("acme", E2, right("2026-11-21T14:00:00.000Z"))).toBe(true);
    expect(await connection.pttl(feedbackKey(keys, "acme", E2))).toBeGreaterThan(7 * 24 * HOUR - 60_000);
    expect(await connection.pttl(feedbackIndexKey(keys, "acme"))).toBeGreaterThan(7 * 24 * HOUR - 60_000);
  });

  it("keeps at most FEEDBACK_HISTORY_MAX answers, the newest", async () => {
    await execution("acme", E1, HOUR);
    for (let i = 0; i < FEEDBACK_HISTORY_MAX + 5; i += 1) {
      await store.record("acme", E1, right(new Date(Date.UTC(2026, 10, 21, 14, 0, i)).toISOString(), `person-${i}`));
    }
    const read = await store.read("acme", E1);
    expect(read?.history).toHaveLength(FEEDBACK_HISTORY_MAX);
    expect(read?.history[0]?.by?.subject).toBe("person-5");
    expect(read?.current.by?.subject).toBe(`person-${FEEDBACK_HISTORY_MAX + 4}`);
  });

  it("gives the current answers of many executions in one call, leaving out those without one", async () => {
    await execution("acme", E1, HOUR);
    await execution("acme", E2, HOUR);
    await store.record("acme", E1, right("2026-11-21T14:00:00.000Z"));
    await store.record("acme", E2, right("2026-11-21T14:00:00.000Z"));
    await store.record("acme", E2, wrong("2026-11-21T14:09:00.000Z"));

    const found = await store.confirmationsOf("acme", [E1, E2, E3]);
    expect([...found.keys()]).toEqual([E1, E2]);
    expect(found.get(E1)?.verdict).toBe("right");
    expect(found.get(E2)).toEqual(wrong("2026-11-21T14:09:00.000Z"));
    expect((await store.confirmationsOf("acme", [])).size).toBe(0);
  });

  it("lists confirmed executions by the time of their current answer, from `since`, a page at a time, dropping those gone", async () => {
    for (const id of [E1, E2, E3]) await execution("acme", id, HOUR);
    await store.record("acme", E1, right("2026-11-21T14:00:00.000Z"));
    await store.record("acme", E2, right("2026-11-21T14:10:00.000Z"));
    await store.record("acme", E3, wrong("2026-11-21T14:20:00.000Z"));
    // E1's answer changes later: it moves to the end.
    await store.record("acme", E1, wrong("2026-11-21T14:30:00.000Z"));

    const all = await store.list("acme", { offset: 0, limit: 10 });
    expect(all.items.map((item) => item.executionId)).toEqual([E2, E3, E1]);
    expect(all.nextOffset).toBeUndefined();

    const first = await store.list("acme", { since: new Date("2026-11-21T14:10:00.000Z"), offset: 0, limit: 2 });
    expect(first.items.map((item) => [item.executionId, item.feedback.verdict])).toEqual([
      [E2, "right"],
      [E3, "wrong"],
    ]);
    expect(first.nextOffset).toBe(2);
    const second = await store.list("acme", { since: new Date("2026-11-21T14:10:00.000Z"), offset: 2, limit: 2 });
    expect(second.items.map((item) => item.executionId)).toEqual([E1]);

    await connection.del(feedbackKey(keys, "acme", E3));
    expect((await store.list("acme", { offset: 0, limit: 10 })).items.map((item) => item.executionId)).toEqual([E2, E1]);
    expect(await connection.zrange(feedbackIndexKey(keys, "acme"), "0", "-1")).toEqual([E2, E1]);
  });
});
