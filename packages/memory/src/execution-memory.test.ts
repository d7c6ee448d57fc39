import type { HistoryConfirmation, Verdict } from "@pes/contracts";
import { ExecutionHistory } from "@pes/contracts";
import { keySpace, memoryGroupKey, memoryPartKey, memoryRecordKey, type KeySpace } from "@pes/jobs";
import { startRedis, uniquePrefix, type RedisHandle } from "@pes/local-services";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createExecutionMemory, type ConfirmationLookup } from "./execution-memory.js";
import { Fingerprint, fingerprintOf, groupOf } from "./fingerprint.js";
import { partKey, partsOf } from "./similarity.js";
import { scopeOf, scopeTag, shortHash } from "./team-scope.js";
import { INCIDENT_TYPES, seededExecutions, seededRandom, type SeededExecution } from "./testing/seeded-incidents.js";

const DAY_MS = 86_400_000;
const RETENTION_MS = 90 * DAY_MS;
const NOW = Date.parse("2026-11-27T18:00:00Z");

let redisHandle: RedisHandle;
let redis: Redis;
let keys: KeySpace;

beforeAll(async () => {
  redisHandle = await startRedis();
  redis = new Redis(redisHandle.url);
  keys = keySpace(uniquePrefix("memory"), redisHandle.url);
});
afterAll(async () => {
  redis.disconnect();
  await redisHandle.stop();
});

/** Remembers every execution, as the worker does once each finishes. */
async function rememberAll(memory: ReturnType<typeof createExecutionMemory>, orgId: string, executions: readonly SeededExecution[]): Promise<void> {
  for (const execution of executions) await memory.remember(orgId, fingerprintOf(execution), RETENTION_MS, NOW);
}

describe("recall over a seeded history of two organizations", () => {
  // Hundreds of past executions of twelve kinds of incident, per organization, over 60 days.
  const random = seededRandom(20261127);
  const acme = seededExecutions(random, { count: 400, now: NOW, days: 60, prefix: "acme" });
  const globex = seededExecutions(random, { count: 300, now: NOW, days: 60, prefix: "globex" });
  const newAcme = seededExecutions(random, { count: 150, now: NOW, days: 0, prefix: "acme-new" });
  const newGlobex = seededExecutions(random, { count: 60, now: NOW, days: 0, prefix: "globex-new" });
  const confirmedIds = new Set(acme.filter((_, index) => index % 7 === 0).map((execution) => execution.executionId));
  const lookups: Array<{ orgId: string; ids: readonly string[] }> = [];
  // A test double of the feedback store: an in-memory implementation of the one lookup recall makes.
  const confirmations: ConfirmationLookup = async (orgId, ids) => {
    lookups.push({ orgId, ids });
    const found = new Map<string, HistoryConfirmation>();
    for (const id of ids) {
      if (orgId === "acme" && confirmedIds.has(id))
        found.set(id, { verdict: "right", resolution: `runbook step for ${id}`, by: "oncall@acme", at: "2026-11-20T10:00:00.000Z" });
    }
    return found;
  };
  let memory: ReturnType<typeof createExecutionMemory>;
  const byId = new Map([...acme, ...globex].map((execution) => [execution.executionId, execution]));

  beforeAll(async () => {
    memory = createExecutionMemory({ redis: () => redis, keys, confirmations });
    await rememberAll(memory, "acme", acme);
    await rememberAll(memory, "globex", globex);
  });

  it("names a past execution of the new incident's cause kind and subject first, in at least 90 % of new incidents", async () => {
    let same = 0;
    const misses: string[] = [];
    for (const incident of newAcme) {
      const history = await memory.recall({
        orgId: "acme",
        fingerprint: fingerprintOf(incident),
        callerTeams: incident.teams,
        retentionMs: RETENTION_MS,
        now: NOW,
      });
      const first = history[0];
      const past = first === undefined ? undefined : byId.get(first.executionId);
      if (
        past !== undefined &&
        past.type === incident.type &&
        first?.cause?.kind === incident.type.causeKind &&
        first.cause.subject === incident.type.causeSubject
      ) {
        same += 1;
      } else {
        misses.push(`${incident.type.name} → ${past?.type.name ?? "nothing"}`);
      }
    }
    const rate = same / newAcme.length;
    process.stdout.write(
      `recall: the most similar past execution has the new incident's cause kind and subject in ${(rate * 100).toFixed(1)} % of ${newAcme.length} new incidents${misses.length === 0 ? "" : `; missed: ${misses.join("; ")}`}\n`,
    );
    expect(rate).toBeGreaterThanOrEqual(0.9);
  });

  it("never recalls another organization's executions, nor a team's the caller is not in", async () => {
    let entries = 0;
    for (const [orgId, incidents] of [
      ["acme", newAcme.slice(0, 60)],
      ["globex", newGlobex],
    ] as const) {
      for (const incident of incidents) {
        for (const callerTeams of [incident.teams, undefined, ["search"], ["payments"]]) {
          const history = await memory.recall({ orgId, fingerprint: fingerprintOf(incident), callerTeams, retentionMs: RETENTION_MS, now: NOW });
          for (const entry of history) {
            entries += 1;
            const past = byId.get(entry.executionId);
            expect(past, entry.executionId).toBeDefined();
            expect(entry.executionId.startsWith(`${orgId}-`)).toBe(true);
            // Written out here rather than through visibleTo, which this checks: a team's execution only to its callers.
            const itsTeams = past?.teams ?? [];
            expect(itsTeams.length === 0 || itsTeams.some((team) => callerTeams?.includes(team) === true), `${entry.executionId} shown to ${callerTeams}`).toBe(
              true,
            );
          }
        }
      }
    }
    expect(entries).toBeGreaterThan(0);
    // The feedback lookup is only ever asked about the organization's own executions.
    for (const lookup of lookups) expect(lookup.ids.every((id) => id.startsWith(`${lookup.orgId}-`))).toBe(true);
  });

  it("recalls every team's executions for an organization admin (everyTeam), and still none of another organization's", async () => {
    let teamEntries = 0;
    for (const incident of newAcme.slice(0, 40)) {
      const fingerprint = fingerprintOf(incident);
      const admin = await memory.recall({ orgId: "acme", fingerprint, everyTeam: true, retentionMs: RETENTION_MS, now: NOW });
      for (const entry of admin) {
        expect(entry.executionId.startsWith("acme-")).toBe(true);
        if ((byId.get(entry.executionId)?.teams ?? []).length > 0) teamEntries += 1;
      }
      // Without it, a caller of no team sees the organization's executions alone.
      const none = await memory.recall({ orgId: "acme", fingerprint, retentionMs: RETENTION_MS, now: NOW });
      for (const entry of none) expect(byId.get(entry.executionId)?.teams ?? []).toEqual([]);
    }
    expect(teamEntries).toBeGreaterThan(0);
  });

  it("explains each entry: the parts it matched are in both fingerprints, those that differ in one only", async () => {
    let checked = 0;
    for (const incident of newAcme.slice(0, 40)) {
      const now = fingerprintOf(incident);
      const history = ExecutionHistory.parse(
        await memory.recall({ orgId: "acme", fingerprint: now, callerTeams: incident.teams, retentionMs: RETENTION_MS, now: NOW }),
      );
      for (const entry of history) {
        const stored = Fingerprint.parse(JSON.parse((await redis.get(memoryRecordKey(keys, "acme", entry.executionId))) ?? "null"));
        const nowParts = new Set(partsOf(now).map(partKey));
        const thenParts = new Set(partsOf(stored).map(partKey));
        expect(entry.matched.length).toBeGreaterThan(0);
        for (const match of entry.matched) {
          expect(nowParts.has(partKey(match))).toBe(true);
          expect(thenParts.has(partKey(match))).toBe(true);
        }
        for (const difference of entry.differed) {
          if (difference.now !== undefined) expect(thenParts.has(partKey({ field: difference.field, value: difference.now }))).toBe(false);
          if (difference.past !== undefined) expect(nowParts.has(partKey({ field: difference.field, value: difference.past }))).toBe(false);
        }
        // Every part is accounted for: matched, or differing on one side.
        const accounted = new Set([
          ...entry.matched.map(partKey),
          ...entry.differed.flatMap((difference) => [
            ...(difference.now === undefined ? [] : [partKey({ field: difference.field, value: difference.now })]),
            ...(difference.past === undefined ? [] : [partKey({ field: difference.field, value: difference.past })]),
          ]),
        ]);
        expect(accounted).toEqual(new Set([...nowParts, ...thenParts]));
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(40);
  });

  it("counts how often executions of the same cause happened, and when first and last, within what the caller may see", async () => {
    const incident = newAcme.find((candidate) => candidate.type.name === "orders-db out of connections");
    expect(incident).toBeDefined();
    if (incident === undefined) return;
    const [first] = await memory.recall({ orgId: "acme", fingerprint: fingerprintOf(incident), retentionMs: RETENTION_MS, now: NOW });
    const same = acme.filter((execution) => execution.type === incident.type);
    const times = same.map((execution) => execution.at.getTime());
    expect(first?.occurrences).toEqual({
      count: same.length,
      first: new Date(Math.min(...times)).toISOString(),
      last: new Date(Math.max(...times)).toISOString(),
    });
  });

  it("carries what someone confirmed of the past execution it shows, from the lookup", async () => {
    let confirmedShown = 0;
    for (const incident of newAcme) {
      const history = await memory.recall({
        orgId: "acme",
        fingerprint: fingerprintOf(incident),
        callerTeams: incident.teams,
        retentionMs: RETENTION_MS,
        now: NOW,
      });
      for (const entry of history) {
        if (confirmedIds.has(entry.executionId)) {
          confirmedShown += 1;
          expect(entry.confirmed).toEqual({
            verdict: "right",
            resolution: `runbook step for ${entry.executionId}`,
            by: "oncall@acme",
            at: "2026-11-20T10:00:00.000Z",
          });
        } else {
          expect(entry.confirmed).toBeUndefined();
        }
      }
    }
    expect(confirmedShown).toBeGreaterThan(0);
  });

  it("reads a remembered execution's fingerprint back for its organization and teams only, to recall the executions like it", async () => {
    const payments = acme.find((execution) => execution.teams?.includes("payments") === true);
    if (payments === undefined) throw new Error("no execution of the payments team");
    const id = payments.executionId;
    const found = await memory.fingerprint("acme", id, ["payments"], RETENTION_MS, NOW);
    expect(found).toEqual(fingerprintOf(payments));
    expect(await memory.fingerprint("acme", id, ["search"], RETENTION_MS, NOW)).toBeUndefined();
    expect(await memory.fingerprint("acme", id, undefined, RETENTION_MS, NOW)).toBeUndefined();
    expect(await memory.fingerprint("globex", id, ["payments"], RETENTION_MS, NOW)).toBeUndefined();
    expect(await memory.fingerprint("acme", id, ["payments"], NOW - payments.at.getTime() - 1, NOW)).toBeUndefined();
    if (found === undefined) return;
    const history = await memory.recall({ orgId: "acme", fingerprint: found, callerTeams: ["payments"], retentionMs: RETENTION_MS, now: NOW });
    expect(history.map((entry) => entry.executionId)).not.toContain(id);
    expect(history[0]?.cause?.subject).toBe(payments.type.causeSubject);
  });

  it("shows at most three entries, each of another cause, the most similar first", async () => {
    for (const incident of newAcme.slice(0, 30)) {
      const history = await memory.recall({
        orgId: "acme",
        fingerprint: fingerprintOf(incident),
        callerTeams: incident.teams,
        retentionMs: RETENTION_MS,
        now: NOW,
      });
      expect(history.length).toBeLessThanOrEqual(3);
      const causes = history.map((entry) => JSON.stringify([entry.cause?.kind, entry.cause?.subject]));
      expect(new Set(causes).size).toBe(causes.length);
      const similarities = history.map((entry) => entry.similarity);
      expect(similarities).toEqual([...similarities].sort((a, b) => b - a));
    }
  });
});

describe("retention", () => {
  it("recalls nothing older than the organization's retention, and trims the index of it as it writes", async () => {
    const memory = createExecutionMemory({ redis: () => redis, keys });
    const [type] = INCIDENT_TYPES;
    if (type === undefined) throw new Error("no incident type");
    const random = seededRandom(7);
    const [old, recent, again] = seededExecutions(random, { count: 3, now: NOW, days: 0, prefix: "ret", types: [type] });
    if (old === undefined || recent === undefined || again === undefined) throw new Error("not seeded");
    const retentionMs = 10 * DAY_MS;
    // Kept when it ran, 12 days ago; then a recent one is kept today.
    const oldPrint = { ...fingerprintOf(old), at: NOW - 12 * DAY_MS };
    await memory.remember("retention", oldPrint, retentionMs, NOW - 12 * DAY_MS);
    const recentPrint = { ...fingerprintOf(recent), at: NOW - DAY_MS };
    await memory.remember("retention", recentPrint, retentionMs, NOW - DAY_MS);

    const history = await memory.recall({ orgId: "retention", fingerprint: fingerprintOf(again), callerTeams: type.teams, retentionMs, now: NOW });
    expect(history.map((entry) => entry.executionId)).toEqual([recentPrint.id]);
    expect(history[0]?.occurrences.count).toBe(1);

    // The index and group sets written today no longer hold what is past the retention.
    const againPrint = { ...fingerprintOf(again), at: NOW };
    await memory.remember("retention", againPrint, retentionMs, NOW);
    const tag = scopeTag(scopeOf(type.teams));
    for (const part of partsOf(againPrint).filter((candidate) => candidate.indexed)) {
      const scores = await redis.zrange(memoryPartKey(keys, "retention", tag, shortHash(partKey(part))), "0", "-1", "WITHSCORES");
      expect(scores.length).toBeGreaterThan(0);
      for (let index = 1; index < scores.length; index += 2) expect(Number(scores[index])).toBeGreaterThanOrEqual(NOW - retentionMs);
    }
    const group = await redis.zrange(memoryGroupKey(keys, "retention", tag, shortHash(groupOf(againPrint))), "0", "-1");
    expect(group).toEqual([recentPrint.id, againPrint.id]);
    // The record itself expires at the end of its retention from its issue time (kept on the day it ran).
    const ttl = await redis.pttl(memoryRecordKey(keys, "retention", recentPrint.id));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(retentionMs);
  });

  it("does not keep a fingerprint already past the retention", async () => {
    const memory = createExecutionMemory({ redis: () => redis, keys });
    const [execution] = seededExecutions(seededRandom(9), { count: 1, now: NOW - 30 * DAY_MS, days: 0, prefix: "stale" });
    if (execution === undefined) throw new Error("not seeded");
    await memory.remember("stale", fingerprintOf(execution), 10 * DAY_MS, NOW);
    expect(await redis.get(memoryRecordKey(keys, "stale", execution.executionId))).toBeNull();
  });
});

describe("a storm of one incident", () => {
  const HOUR_MS = 3_600_000;
  const oom = (pod: string): Verdict => ({
    conclusion: "cause",
    cause: { kind: "oom", subject: `pod/${pod}`, detail: "OOMKilled", action: "Warnings", confidence: "high" },
    symptoms: [
      { kind: "oom", subject: `pod/${pod}`, action: "Warnings" },
      { kind: "rise", subject: "service=checkout", action: "p99" },
    ],
    background: [],
    ruledOut: [],
    normal: [],
    unchecked: [],
  });
  const restart: Verdict = {
    conclusion: "cause",
    cause: { kind: "crash-loop", subject: "pod/ledger-7d9f8b6c5d-x2x7q", action: "Warnings", confidence: "medium" },
    symptoms: [{ kind: "rise", subject: "service=checkout", action: "p99" }],
    background: [],
    ruledOut: [],
    normal: [],
    unchecked: [],
  };
  const execution = (id: string, at: number, verdict: Verdict) =>
    fingerprintOf({ executionId: id, playbook: "checkout-latency", at: new Date(at), attributes: { service: "checkout" }, verdict });
  const STORM = 300;
  const storm = Array.from({ length: STORM }, (_, index) =>
    execution(`storm-${index}`, NOW - (STORM - index) * 60_000, oom(`ledger-7d9f8b6c5d-${["x2x7q", "q8zkp", "b4c5d"][index % 3]}`)),
  );
  const confirmedId = "storm-290";
  const lookups: string[][] = [];
  const confirmations: ConfirmationLookup = async (_orgId, ids) => {
    lookups.push([...ids]);
    return new Map(ids.filter((id) => id === confirmedId).map((id) => [id, { verdict: "right", resolution: "Raised the limit" }]));
  };
  let memory: ReturnType<typeof createExecutionMemory>;

  beforeAll(async () => {
    memory = createExecutionMemory({ redis: () => redis, keys, confirmations });
    await memory.remember("storm", execution("restart-1", NOW - 20 * HOUR_MS, restart), RETENTION_MS, NOW);
    for (const print of storm) await memory.remember("storm", print, RETENTION_MS, NOW);
  });

  it("counts every execution of the storm, and still shows the other incident like it", async () => {
    const now = execution("storm-new", NOW, oom("ledger-7d9f8b6c5d-zz9kq"));
    const history = await memory.recall({ orgId: "storm", fingerprint: now, retentionMs: RETENTION_MS, now: NOW });
    expect(history.map((entry) => entry.executionId)).toEqual([confirmedId, "restart-1"]);
    expect(history[0]).toMatchObject({
      similarity: 1,
      occurrences: { count: STORM, first: new Date(NOW - STORM * 60_000).toISOString(), last: new Date(NOW - 60_000).toISOString() },
      confirmed: { verdict: "right", resolution: "Raised the limit" },
    });
    expect(history[1]?.occurrences.count).toBe(1);
    // The confirmations are asked about the storm's most recent executions, not all of them.
    expect(lookups.at(-1)?.length).toBeLessThanOrEqual(40);
  });

  it("recalls, then remembers, in one step: an execution neither shows nor counts itself, and the next one counts it", async () => {
    const first = execution("storm-next-1", NOW - 30_000, oom("ledger-7d9f8b6c5d-q8zkp"));
    const [recalled] = await memory.recallAndRemember({ orgId: "storm", fingerprint: first, retentionMs: RETENTION_MS, now: NOW });
    expect(recalled?.occurrences.count).toBe(STORM);
    const second = execution("storm-next-2", NOW - 20_000, oom("ledger-7d9f8b6c5d-b4c5d"));
    const [next] = await memory.recallAndRemember({ orgId: "storm", fingerprint: second, retentionMs: RETENTION_MS, now: NOW });
    expect(next?.occurrences).toMatchObject({ count: STORM + 1, last: new Date(NOW - 30_000).toISOString() });
    // Retried: it does not recall itself, and is counted once.
    const [retried] = await memory.recallAndRemember({ orgId: "storm", fingerprint: second, retentionMs: RETENTION_MS, now: NOW });
    expect(retried?.executionId).not.toBe("storm-next-2");
    expect(retried?.occurrences.count).toBe(STORM + 2);
  });

  it("with the feedback index, finds a confirmed execution anywhere in the storm, and asks the lookup about it alone", async () => {
    const index = `${keys.prefix}:test-confirmed-index`;
    await redis.zadd(index, NOW, "storm-5", NOW, "elsewhere-1");
    const asked: string[][] = [];
    const indexed = createExecutionMemory({
      redis: () => redis,
      keys,
      confirmations: async (_orgId, ids) => {
        asked.push([...ids]);
        return new Map(ids.filter((id) => id === "storm-5").map((id) => [id, { verdict: "right", resolution: "Raised the limit" }]));
      },
      confirmedIndex: () => index,
    });
    const now = execution("storm-indexed", NOW, oom("ledger-7d9f8b6c5d-x2x7q"));
    const history = await indexed.recall({ orgId: "storm", fingerprint: now, retentionMs: RETENTION_MS, now: NOW });
    expect(history[0]).toMatchObject({ executionId: "storm-5", confirmed: { verdict: "right" } });
    expect(history[0]?.at).toBe(new Date(NOW - (STORM - 5) * 60_000).toISOString());
    expect(asked).toEqual([["storm-5"]]);
    // Nobody confirmed anything: the lookup is not asked, and the latest is shown.
    await redis.del(index);
    asked.length = 0;
    const [latest] = await indexed.recall({ orgId: "storm", fingerprint: now, retentionMs: RETENTION_MS, now: NOW });
    expect(asked).toEqual([]);
    expect(latest?.confirmed).toBeUndefined();
    expect(Date.parse(latest?.at ?? "")).toBeGreaterThanOrEqual(NOW - 60_000);
  });

  it("keeps one member per content in the index: the storm does not grow it", async () => {
    const tag = scopeTag(scopeOf(undefined));
    for (const part of partsOf(storm[0] as Fingerprint).filter((candidate) => candidate.indexed)) {
      const members = await redis.zrange(memoryPartKey(keys, "storm", tag, shortHash(partKey(part))), "0", "-1", "WITHSCORES");
      // The storm's content, and the restart where it shares the part; scored by the storm's latest execution.
      expect(members.length).toBeLessThanOrEqual(4);
      const scores = members.filter((_, index) => index % 2 === 1).map(Number);
      expect(Math.max(...scores)).toBeGreaterThanOrEqual(NOW - 60_000);
    }
  });

  it("reads nothing for a fingerprint that names no incident, and keeps only its record", async () => {
    const quiet: Verdict = { conclusion: "no-cause", symptoms: [], background: [], ruledOut: [], normal: [], unchecked: [] };
    const print = execution("quiet-1", NOW, quiet);
    await memory.remember("quiet", print, RETENTION_MS, NOW);
    expect(await redis.get(memoryRecordKey(keys, "quiet", "quiet-1"))).toBe(JSON.stringify(print));
    expect(await redis.keys(`${memoryRecordKey(keys, "quiet", "")}*`)).toEqual([memoryRecordKey(keys, "quiet", "quiet-1")]);
    const offline = createExecutionMemory({
      redis: () => {
        throw new Error("recall read Redis");
      },
      keys,
    });
    expect(await offline.recall({ orgId: "quiet", fingerprint: execution("quiet-2", NOW, quiet), retentionMs: RETENTION_MS, now: NOW })).toEqual([]);
  });
});
