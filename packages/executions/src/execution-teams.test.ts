// The teams an execution or a batch runs for, kept with its record by the lifecycle's scripts on a real
// Redis, and what makes two teams' identical requests two executions.
import { createHash } from "node:crypto";
import type { ExecutionRequest } from "@pes/contracts";
import { keySpace, type KeySpace } from "@pes/jobs";
import { startRedis, uniquePrefix, type RedisHandle } from "@pes/local-services";
import { Redis } from "ioredis";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { executionFingerprint } from "./execution-fingerprint.js";
import { acceptBatch, beginExecutions, defineLifecycleCommands, readBatch, readRecords, type BeginSettings } from "./execution-lifecycle.js";

let redisHandle: RedisHandle;
let redis: Redis;
let keys: KeySpace;

beforeAll(async () => {
  redisHandle = await startRedis();
  redis = new Redis(redisHandle.url);
  defineLifecycleCommands(redis);
});

afterAll(async () => {
  redis.disconnect();
  await redisHandle.stop();
});

beforeEach(() => {
  keys = keySpace(uniquePrefix("teams"), redisHandle.url);
});

const settings: BeginSettings = { orgId: "acme", lane: "interactive", deadline: Date.now() + 60_000, ttlMs: 120_000, retainMs: 60_000, reuseMs: 60_000 };

describe("an execution's teams", () => {
  it("are kept in its record, and read back; a record begun without any reads as none given", async () => {
    await beginExecutions(redis, keys, settings, [
      { candidateId: "e-1", queue: "q", teams: ["payments", "search"] },
      { candidateId: "e-2", queue: "q", teams: [] },
      { candidateId: "e-3", queue: "q" },
    ]);
    const records = await readRecords(redis, keys, "acme", ["e-1", "e-2", "e-3"]);
    expect(records.map((record) => record?.teams)).toEqual([["payments", "search"], [], undefined]);
  });

  it("are those of the execution a request joins, never the joiner's", async () => {
    await beginExecutions(redis, keys, settings, [{ candidateId: "e-1", fingerprint: "f", queue: "q", teams: ["payments"] }]);
    const joined = await beginExecutions(redis, keys, settings, [{ candidateId: "e-2", fingerprint: "f", queue: "q", teams: ["search"] }]);
    expect(joined.executions).toEqual([{ executionId: "e-1", state: "pending" }]);
    expect((await readRecords(redis, keys, "acme", ["e-1"]))[0]?.teams).toEqual(["payments"]);
  });

  it("make two teams' identical requests two fingerprints, and leave the fingerprint of a request without teams as it was", () => {
    const request: ExecutionRequest = {
      orgId: "acme",
      requestId: "r",
      bookName: "disk-full",
      time: "2024-05-01T12:00:00.000Z",
      attributes: { host: "db-1" },
      liveRun: false,
    };
    const now = Date.parse("2024-05-01T12:00:30Z");
    const print = (teams?: string[]) => executionFingerprint(teams === undefined ? request : { ...request, teams }, 60_000, now);
    expect(print(["payments"])).not.toBe(print(["search"]));
    expect(print(["payments"])).toBe(print(["payments"]));
    expect(print([])).not.toBe(print(["payments"]));
    // Without teams (an API before them), the fingerprint the version before computed: a rolling deploy's two versions share.
    const before = ["execute", "acme", "disk-full", [["host", "db-1"]], Math.floor(Date.parse(request.time) / 60_000), false, null, null];
    expect(print()).toBe(createHash("sha256").update(JSON.stringify(before)).digest("hex"));
  });
});

describe("a batch's teams", () => {
  it("are kept in its record, and read back", async () => {
    const batch = { deadline: Date.now() + 60_000, ttlMs: 120_000, total: 1, candidateIds: ["i-1"], invalid: [] };
    await acceptBatch(redis, keys, "acme", { ...batch, batchId: "b-1", teams: ["payments"] });
    await acceptBatch(redis, keys, "acme", { ...batch, batchId: "b-2" });
    expect((await readBatch(redis, keys, "acme", "b-1"))?.teams).toEqual(["payments"]);
    expect((await readBatch(redis, keys, "acme", "b-2"))?.teams).toBeUndefined();
    expect((await readBatch(redis, keys, "acme", "b-1"))?.total).toBe(1);
  });
});
