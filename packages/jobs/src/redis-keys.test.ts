import { startRedis, type RedisHandle } from "@pes/local-services";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  auditRecordedKey,
  auditStreamKey,
  batchCountedKey,
  batchInvalidKey,
  batchItemsKey,
  batchKey,
  batchLostCheckKey,
  batchRootKey,
  batchRootLockKey,
  channelPaceKey,
  chartsKey,
  coalesceKey,
  evidenceKey,
  executionBatchesKey,
  feedbackIndexKey,
  feedbackKey,
  executionKey,
  executionWaitersKey,
  finishedKey,
  idempotencyKey,
  incidentNoteKey,
  keySpace,
  laneKey,
  memoryContentKey,
  memoryGroupKey,
  memoryPartKey,
  memoryPrefix,
  memoryRecordKey,
  memoryScopesKey,
  organizationKeysLua,
  organizationPrefix,
  queryMinuteKey,
  querySlotsKey,
  replyChannel,
  SCRIPT_KEYS,
  slackPostKey,
  slackSignatureKey,
  teamsPostKey,
  type KeySpace,
} from "./redis-keys.js";

/** Every key's name for one organization, execution, batch and channel. */
function names(keys: KeySpace): Record<string, string> {
  return {
    organizationPrefix: organizationPrefix(keys, "acme"),
    execution: executionKey(keys, "acme", "e-1"),
    executionWaiters: executionWaitersKey(keys, "acme", "e-1"),
    executionBatches: executionBatchesKey(keys, "acme", "e-1"),
    coalesce: coalesceKey(keys, "acme", "f00d"),
    finished: finishedKey(keys, "acme"),
    interactiveLane: laneKey(keys, "acme", "interactive"),
    batchLane: laneKey(keys, "acme", "batch"),
    batch: batchKey(keys, "acme", "b-1"),
    batchItems: batchItemsKey(keys, "acme", "b-1"),
    batchCounted: batchCountedKey(keys, "acme", "b-1"),
    batchInvalid: batchInvalidKey(keys, "acme", "b-1"),
    batchLostCheck: batchLostCheckKey(keys, "acme", "b-1"),
    idempotency: idempotencyKey(keys, "acme", "ab12"),
    evidence: evidenceKey(keys, "acme", "e-1"),
    charts: chartsKey(keys, "acme", "e-1"),
    feedback: feedbackKey(keys, "acme", "e-1"),
    feedbackIndex: feedbackIndexKey(keys, "acme"),
    slackSignature: slackSignatureKey(keys, "v0=ab12"),
    memoryRecord: memoryRecordKey(keys, "acme", "e-1"),
    memoryPart: memoryPartKey(keys, "acme", "s1", "p1"),
    memoryContent: memoryContentKey(keys, "acme", "s1", "c1"),
    memoryGroup: memoryGroupKey(keys, "acme", "s1", "g1"),
    memoryScopes: memoryScopesKey(keys, "acme"),
    memoryPrefix: memoryPrefix(keys, "acme"),
    audit: auditStreamKey(keys, "acme"),
    auditRecorded: auditRecordedKey(keys, "acme", "e-1"),
    reply: replyChannel(keys, "i-1"),
    querySlots: querySlotsKey(keys, "acme/metrics"),
    queryMinute: queryMinuteKey(keys, "acme/metrics"),
    slackPace: channelPaceKey(keys, "slack", "C1"),
    teamsPace: channelPaceKey(keys, "teams", "T1/19:c@thread.tacv2"),
    slackPost: slackPostKey(keys, "e-1:C1:0"),
    teamsPost: teamsPostKey(keys, "e-1:T1/19:c@thread.tacv2:0"),
    incidentNote: incidentNoteKey(keys, "e-1"),
    batchRoot: batchRootKey(keys, "b-1", "C1"),
    batchRootLock: batchRootLockKey(keys, "b-1", "C1"),
  };
}

/** The names under the prefix that carry no hash tag: the same on one Redis and on a cluster. */
const UNTAGGED = {
  reply: "pes:reply:i-1",
  querySlots: "pes:query-slots:acme/metrics",
  queryMinute: "pes:query-minute:acme/metrics",
  slackPace: "pes:slack-pace:C1",
  teamsPace: "pes:teams-pace:T1/19:c@thread.tacv2",
  slackPost: "pes:slack-post:e-1:C1:0",
  teamsPost: "pes:teams-post:e-1:T1/19:c@thread.tacv2:0",
  incidentNote: "pes:incident-note:e-1",
  batchRoot: "pes:batch-root:b-1:C1",
  batchRootLock: "pes:batch-root:b-1:C1:lock",
  slackSignature: "pes:slack-signature:v0=ab12",
};

/** The names under the organization's prefix, `org` as it appears in them. */
function organizationNames(org: string): Record<string, string> {
  return {
    organizationPrefix: `pes:org:${org}:`,
    execution: `pes:org:${org}:execution:e-1`,
    executionWaiters: `pes:org:${org}:execution:e-1:waiters`,
    executionBatches: `pes:org:${org}:execution:e-1:batches`,
    coalesce: `pes:org:${org}:coalesce:f00d`,
    finished: `pes:org:${org}:finished`,
    interactiveLane: `pes:org:${org}:lane:interactive`,
    batchLane: `pes:org:${org}:lane:batch`,
    batch: `pes:org:${org}:batch:b-1`,
    batchItems: `pes:org:${org}:batch:b-1:items`,
    batchCounted: `pes:org:${org}:batch:b-1:counted`,
    batchInvalid: `pes:org:${org}:batch:b-1:invalid`,
    batchLostCheck: `pes:org:${org}:batch:b-1:lost-check`,
    idempotency: `pes:org:${org}:idempotency:ab12`,
    evidence: `pes:org:${org}:evidence:e-1`,
    charts: `pes:org:${org}:charts:e-1`,
    feedback: `pes:org:${org}:feedback:e-1`,
    feedbackIndex: `pes:org:${org}:feedback-index`,
    memoryRecord: `pes:org:${org}:memory:e-1`,
    memoryPart: `pes:org:${org}:memory:index:s1:p1`,
    memoryContent: `pes:org:${org}:memory:content:s1:c1`,
    memoryGroup: `pes:org:${org}:memory:group:s1:g1`,
    memoryScopes: `pes:org:${org}:memory:scope-tags`,
    memoryPrefix: `pes:org:${org}:memory:`,
    audit: `pes:org:${org}:audit`,
    auditRecorded: `pes:org:${org}:audit:recorded:e-1`,
  };
}

// The names are the data already in Redis (and every key the Lua scripts name): these are the exact strings.
describe("the service's Redis keys", () => {
  it("are named as stored on one Redis, untagged", () => {
    const keys = keySpace("pes", "redis://127.0.0.1:6379");
    expect(keys.bullPrefix).toBe("pes");
    expect(names(keys)).toEqual({ ...organizationNames("acme"), ...UNTAGGED });
  });

  it("carry the organization's hash tag on a Redis Cluster, and only there", () => {
    const keys = keySpace("pes", "redis+cluster://127.0.0.1:7000,127.0.0.1:7001/");
    expect(keys.bullPrefix).toBe("{pes}");
    expect(names(keys)).toEqual({ ...organizationNames("{acme}"), ...UNTAGGED });
  });
});

// The Lua scripts of @pes/executions name their organization's keys with the functions of organizationKeysLua,
// run here in a real Redis against the builders they are generated from.
describe("the Lua scripts' KEY table", () => {
  let redisHandle: RedisHandle;
  let redis: Redis;

  beforeAll(async () => {
    redisHandle = await startRedis();
    redis = new Redis(redisHandle.url);
  });

  afterAll(async () => {
    redis.disconnect();
    await redisHandle.stop();
  });

  /** Each KEY function's name in Lua for the ids given, by the name of its function. */
  async function luaNames(keys: KeySpace, orgId: string, ids: Record<keyof typeof SCRIPT_KEYS, string>): Promise<Record<string, string>> {
    const names = Object.keys(SCRIPT_KEYS);
    const answer = (await redis.eval(
      `${organizationKeysLua()}local names = {}\nfor i, name in ipairs(ARGV) do if i % 2 == 1 then names[#names + 1] = KEY[name](KEYS[1], ARGV[i + 1]) end end\nreturn names`,
      1,
      organizationPrefix(keys, orgId),
      ...names.flatMap((name) => [name, ids[name as keyof typeof SCRIPT_KEYS]]),
    )) as string[];
    return Object.fromEntries(names.map((name, i) => [name, answer[i] ?? ""]));
  }

  function builderNames(keys: KeySpace, orgId: string, ids: Record<keyof typeof SCRIPT_KEYS, string>): Record<string, string> {
    return Object.fromEntries(
      Object.entries<(keys: KeySpace, orgId: string, id: never) => string>(SCRIPT_KEYS).map(([name, build]) => [
        name,
        build(keys, orgId, ids[name as keyof typeof SCRIPT_KEYS] as never),
      ]),
    );
  }

  const samples: Record<keyof typeof SCRIPT_KEYS, string>[] = [
    {
      execution: "e-1",
      executionWaiters: "e-1",
      executionBatches: "e-1",
      coalesce: "f00d",
      finished: "",
      lane: "interactive",
      batch: "b-1",
      batchItems: "b-1",
      batchCounted: "b-1",
      batchInvalid: "b-1",
    },
    {
      execution: "0b0e2a3c-6f1d-4c5e-9a7b-1d2e3f405162",
      executionWaiters: "0b0e2a3c-6f1d-4c5e-9a7b-1d2e3f405162",
      executionBatches: "alert:fp/1",
      coalesce: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
      finished: "",
      lane: "batch",
      batch: "b:2 {x}",
      batchItems: "b:2 {x}",
      batchCounted: "b:2 {x}",
      batchInvalid: "b:2 {x}",
    },
  ];

  it("names every key as its builder does, on one Redis and on a cluster", async () => {
    for (const keys of [keySpace("pes", "redis://127.0.0.1:6379"), keySpace("q1", "redis+cluster://127.0.0.1:7000,127.0.0.1:7001/")]) {
      for (const orgId of ["acme", "org-2"]) {
        for (const ids of samples) {
          expect(await luaNames(keys, orgId, ids)).toEqual(builderNames(keys, orgId, ids));
        }
      }
    }
  });

  it("has a function for every key the builders name below an organization that the scripts use", () => {
    expect(organizationKeysLua()).toContain("KEY.execution = function(prefix, id) return prefix .. 'execution:' .. id end\n");
    expect(organizationKeysLua()).toContain("KEY.executionWaiters = function(prefix, id) return prefix .. 'execution:' .. id .. ':waiters' end\n");
    expect(organizationKeysLua()).toContain("KEY.finished = function(prefix) return prefix .. 'finished' end\n");
    expect(Object.keys(SCRIPT_KEYS).sort()).toEqual(
      ["batch", "batchCounted", "batchInvalid", "batchItems", "coalesce", "execution", "executionBatches", "executionWaiters", "finished", "lane"].sort(),
    );
  });
});
