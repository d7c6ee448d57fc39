import { describe, expect, it } from "vitest";
import {
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
  executionKey,
  executionWaitersKey,
  finishedKey,
  idempotencyKey,
  incidentNoteKey,
  keySpace,
  laneKey,
  organizationPrefix,
  querySlotsKey,
  replyChannel,
  slackPostKey,
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
    reply: replyChannel(keys, "i-1"),
    querySlots: querySlotsKey(keys, "acme/metrics"),
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
  slackPace: "pes:slack-pace:C1",
  teamsPace: "pes:teams-pace:T1/19:c@thread.tacv2",
  slackPost: "pes:slack-post:e-1:C1:0",
  teamsPost: "pes:teams-post:e-1:T1/19:c@thread.tacv2:0",
  incidentNote: "pes:incident-note:e-1",
  batchRoot: "pes:batch-root:b-1:C1",
  batchRootLock: "pes:batch-root:b-1:C1:lock",
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
  };
}

// The names are the data already in Redis (and every key the Lua scripts are given): these are the exact strings.
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
