import { AUDIT_RECORD_VERSION, type AuditRecord } from "@pes/contracts";
import { auditStreamKey, keySpace, type KeySpace } from "@pes/jobs";
import { startRedis, uniquePrefix, type RedisHandle } from "@pes/local-services";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createAuditTrail, type AuditTrail } from "./audit-trail.js";

let redis: RedisHandle;
let connection: Redis;
let keys: KeySpace;
let trail: AuditTrail;

beforeAll(async () => {
  redis = await startRedis();
});
beforeEach(() => {
  connection = new Redis(redis.url);
  keys = keySpace(uniquePrefix("audit"), redis.url);
  trail = createAuditTrail(() => connection, keys);
});
afterEach(async () => {
  await connection.quit();
});
afterAll(async () => {
  await redis.stop();
});

function record(n: number, overrides: Partial<AuditRecord> = {}): AuditRecord {
  return {
    v: AUDIT_RECORD_VERSION,
    executionId: `execution-${n}`,
    requestId: `request-${n}`,
    orgId: "acme",
    finishedAt: new Date(Date.UTC(2026, 10, 20, 14, 0, n)).toISOString(),
    requestedBy: { subject: n % 2 === 0 ? "alice" : "bob", clientId: "cli", teams: ["payments"], entry: { kind: "route", route: "POST /playbook/execution" } },
    playbook: { name: n % 3 === 0 ? "Checkout latency" : "High error rate", version: "sha256:00" },
    outcome: "success",
    conclusion: "no-cause",
    queries: [
      {
        action: "Errors",
        dataSource: "prom",
        connector: "prometheus",
        query: { promql: `rate(errors[5m]) * ${n}` },
        window: { start: "2026-11-20T13:00:00.000Z", end: "2026-11-20T14:00:00.000Z" },
      },
    ],
    sent: [{ service: "slack", method: "POST", url: "https://slack.com/api/chat.postMessage", bytes: 812, status: 200 }],
    ...overrides,
  };
}

const all = { limit: 500 };

describe("createAuditTrail", () => {
  it("appends one record per execution however often it is appended, and reads it back for its organization only", async () => {
    expect(await trail.append(record(1), { retentionDays: 30 })).toBe(true);
    expect(await trail.append(record(1, { outcome: "error" }), { retentionDays: 30 })).toBe(false);

    const page = await trail.read("acme", all);
    expect(page.records).toHaveLength(1);
    const [only] = page.records;
    expect(only).toMatchObject(record(1));
    expect(only?.id).toMatch(/^\d+-\d+$/);
    expect(page.next).toBeUndefined();
    expect(await trail.read("globex", all)).toEqual({ records: [] });
  });

  it("pages newest first with the stream id as cursor, and filters by subject, playbook and execution", async () => {
    for (let n = 1; n <= 7; n += 1) await trail.append(record(n), { retentionDays: 30 });

    const first = await trail.read("acme", { limit: 3 });
    expect(first.records.map((entry) => entry.executionId)).toEqual(["execution-7", "execution-6", "execution-5"]);
    expect(first.next).toBe(first.records[2]?.id);
    const second = await trail.read("acme", { limit: 3, cursor: first.next });
    expect(second.records.map((entry) => entry.executionId)).toEqual(["execution-4", "execution-3", "execution-2"]);
    const third = await trail.read("acme", { limit: 3, cursor: second.next });
    expect(third.records.map((entry) => entry.executionId)).toEqual(["execution-1"]);
    expect(third.next).toBeUndefined();

    const alice = await trail.read("acme", { limit: 10, subject: "alice" });
    expect(alice.records.map((entry) => entry.executionId)).toEqual(["execution-6", "execution-4", "execution-2"]);
    const checkout = await trail.read("acme", { limit: 10, playbook: "Checkout latency" });
    expect(checkout.records.map((entry) => entry.executionId)).toEqual(["execution-6", "execution-3"]);
    const one = await trail.read("acme", { limit: 10, execution: "execution-5" });
    expect(one.records.map((entry) => entry.executionId)).toEqual(["execution-5"]);
  });

  it("filters by the time its records were appended (their stream ids)", async () => {
    const stream = auditStreamKey(keys, "acme");
    // Entries of known times, written as the script writes them.
    await connection.xadd(stream, "1000-0", "record", JSON.stringify(record(1)));
    await connection.xadd(stream, "2000-0", "record", JSON.stringify(record(2)));
    await connection.xadd(stream, "3000-0", "record", JSON.stringify(record(3)));

    const iso = (ms: number) => new Date(ms).toISOString();
    const between = await trail.read("acme", { limit: 10, from: iso(1500), to: iso(3000) });
    expect(between.records.map((entry) => entry.id)).toEqual(["3000-0", "2000-0"]);
    const upTo = await trail.read("acme", { limit: 10, to: iso(2999) });
    expect(upTo.records.map((entry) => entry.id)).toEqual(["2000-0", "1000-0"]);
    const pagedWithin = await trail.read("acme", { limit: 1, to: iso(3000), cursor: "3000-0" });
    expect(pagedWithin.records.map((entry) => entry.id)).toEqual(["2000-0"]);
  });

  it("trims records older than the retention as it appends, and expires the stream after it", async () => {
    const stream = auditStreamKey(keys, "acme");
    // Small macro nodes so that approximate trimming (whole nodes only) shows on a few entries.
    await connection.config("SET", "stream-node-max-entries", "10");
    try {
      const old = Date.now() - 3 * 86_400_000;
      for (let n = 0; n < 30; n += 1) await connection.xadd(stream, `${old + n}-0`, "record", JSON.stringify(record(100 + n)));

      await trail.append(record(1), { retentionDays: 2 });

      const ids = (await connection.xrange(stream, "-", "+")).map(([id]) => id);
      expect(ids.length).toBeLessThan(31);
      // Whatever trimming left of the old ones is in the last node it shares with the new record.
      expect(ids.filter((id) => Number(id.split("-")[0]) < old + 20)).toEqual([]);
      const newest = (await trail.read("acme", { limit: 1 })).records[0];
      expect(newest?.executionId).toBe("execution-1");
      const ttl = await connection.pttl(stream);
      expect(ttl).toBeGreaterThan(86_400_000);
      expect(ttl).toBeLessThanOrEqual(2 * 86_400_000);
    } finally {
      await connection.config("SET", "stream-node-max-entries", "100");
    }
  });

  it("skips an entry it cannot read rather than failing the page", async () => {
    await trail.append(record(1), { retentionDays: 30 });
    await connection.xadd(auditStreamKey(keys, "acme"), "*", "record", "{not json");
    await connection.xadd(auditStreamKey(keys, "acme"), "*", "other", "field");

    const page = await trail.read("acme", all);
    expect(page.records.map((entry) => entry.executionId)).toEqual(["execution-1"]);
  });
});
