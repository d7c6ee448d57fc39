import type { HistoryConfirmation } from "@pes/contracts";
import { ExecutionHistory } from "@pes/contracts";
import { keySpace, memoryPartKey, memoryRecordKey, type KeySpace } from "@pes/jobs";
import { startRedis, uniquePrefix, type RedisHandle } from "@pes/local-services";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createExecutionMemory, type ConfirmationLookup } from "./execution-memory.js";
import { Fingerprint, fingerprintOf } from "./fingerprint.js";
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

    // The part sets written today no longer hold the execution past the retention.
    await memory.remember("retention", { ...fingerprintOf(again), at: NOW }, retentionMs, NOW);
    const tag = scopeTag(scopeOf(type.teams));
    for (const part of partsOf(recentPrint).filter((candidate) => candidate.indexed)) {
      const members = await redis.zrange(memoryPartKey(keys, "retention", tag, shortHash(partKey(part))), "0", "-1");
      expect(members).not.toContain(oldPrint.id);
    }
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
