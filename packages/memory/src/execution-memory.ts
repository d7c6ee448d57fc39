import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { MAX_HISTORY_ENTRIES, type ExecutionHistory, type HistoryConfirmation, type HistoryEntry } from "@pes/contracts";
import { memoryGroupKey, memoryPartKey, memoryRecordKey, memoryScopesKey, type KeySpace, type RedisConnection } from "@pes/jobs";
import { Fingerprint, FINGERPRINT_VERSION, groupOf } from "./fingerprint.js";
import { compareParts, partKey, partsOf, type Comparison } from "./similarity.js";
import { scopeOf, scopeTag, shortHash, teamsOfScope, visibleTo } from "./team-scope.js";

/**
 * What someone confirmed of past executions (their feedback), by execution id: the one lookup recall
 * makes of them, given the organization and the ids of the executions it is about to show. An id
 * nobody gave feedback on is absent from the map.
 */
export type ConfirmationLookup = (orgId: string, executionIds: readonly string[]) => Promise<Map<string, HistoryConfirmation>>;

/** A recall: which organization, the new execution's fingerprint, who asks, and the retention. */
export interface RecallQuery {
  orgId: string;
  fingerprint: Fingerprint;
  /** The teams of the execution (or caller) that recalls: only what they may see is read (visibleTo). */
  callerTeams?: readonly string[];
  /** An organization admin's recall: every team's executions, whatever `callerTeams` says. */
  everyTeam?: boolean;
  /** The organization's memory retention: nothing older than this before `now` is recalled. */
  retentionMs: number;
  /** Default Date.now(). */
  now?: number;
  /** At most this many entries, default and at most MAX_HISTORY_ENTRIES. */
  limit?: number;
}

export interface ExecutionMemory {
  /**
   * Remembers a finished execution's fingerprint for the retention from its issue time, in its team
   * scope's index, trimming what the retention let go of in the sets it writes. One MULTI. A fingerprint
   * already older than the retention is not kept.
   */
  remember(orgId: string, fingerprint: Fingerprint, retentionMs: number, now?: number): Promise<void>;
  /**
   * The few past executions most like this one that the caller may see (see RecallQuery), most similar
   * first, each of another cause (or set of symptoms): what matched and what differed, how often and when
   * such executions happened, what someone confirmed of them. Empty when none is similar enough.
   */
  recall(query: RecallQuery): Promise<ExecutionHistory>;
  /**
   * A remembered execution's fingerprint, for a recall of the executions like it (a tool that starts from
   * an execution id): undefined when it is not remembered, past `retentionMs`, or not the caller's to see
   * (another organization's is under other keys; another team's is visibleTo's refusal).
   */
  fingerprint(
    orgId: string,
    executionId: string,
    callerTeams: readonly string[] | undefined,
    retentionMs: number,
    now?: number,
  ): Promise<Fingerprint | undefined>;
}

/**
 * Of each part's set, the most recent members read per recall: fewer of a part that many executions share
 * (weight 1: a symptom's kind, the playbook, an attribute), which finds no candidate the others miss.
 */
const READ_PER_PART = { specific: 200, common: 50 } as const;
/** Candidates scored exactly, of those the script ranks. */
const CANDIDATES = 40;
/** A part's set keeps its most recent members only (the groups keep every one, for the counts). */
export const MAX_PART_MEMBERS = 5_000;
/** Below this similarity a past execution is not shown. */
export const MIN_SIMILARITY = 0.35;

const RECALL_CANDIDATES = readFileSync(new URL("../scripts/recall-candidates.lua", import.meta.url), "utf8");
const RECALL_CANDIDATES_SHA = createHash("sha1").update(RECALL_CANDIDATES).digest("hex");

/** The memory on a connection its caller owns (the worker's producer connection). */
export function createExecutionMemory(options: { redis: () => RedisConnection; keys: KeySpace; confirmations?: ConfirmationLookup }): ExecutionMemory {
  const { keys } = options;
  return {
    async remember(orgId, fingerprint, retentionMs, now = Date.now()) {
      const ttlMs = fingerprint.at + retentionMs - now;
      if (ttlMs <= 0) return;
      const cutoff = now - retentionMs;
      // A set lives a retention after its last write: by then each of its members is past the retention.
      const setTtlMs = Math.max(retentionMs, Math.ceil(ttlMs));
      const scope = scopeOf(fingerprint.teams);
      const tag = scopeTag(scope);
      const id = fingerprint.id;
      const multi = options.redis().multi();
      multi.set(memoryRecordKey(keys, orgId, id), JSON.stringify(fingerprint), "PX", Math.ceil(ttlMs));
      for (const part of partsOf(fingerprint)) {
        if (!part.indexed) continue;
        const key = memoryPartKey(keys, orgId, tag, shortHash(partKey(part)));
        multi.zadd(key, fingerprint.at, id);
        multi.zremrangebyscore(key, "-inf", `(${cutoff}`);
        multi.zremrangebyrank(key, 0, -(MAX_PART_MEMBERS + 1));
        multi.pexpire(key, setTtlMs);
      }
      const group = memoryGroupKey(keys, orgId, tag, shortHash(groupOf(fingerprint)));
      multi.zadd(group, fingerprint.at, id);
      multi.zremrangebyscore(group, "-inf", `(${cutoff}`);
      multi.pexpire(group, setTtlMs);
      multi.sadd(memoryScopesKey(keys, orgId), scope);
      multi.pexpire(memoryScopesKey(keys, orgId), setTtlMs);
      const answers = await multi.exec();
      const failed = answers?.find(([error]) => error !== null)?.[0];
      if (answers === null || failed) throw failed ?? new Error("the fingerprint was not kept: the transaction was aborted");
    },

    async fingerprint(orgId, executionId, callerTeams, retentionMs, now = Date.now()) {
      const found = parseFingerprint(await options.redis().get(memoryRecordKey(keys, orgId, executionId)));
      return found === undefined || found.at < now - retentionMs || !visibleTo(found.teams, callerTeams) ? undefined : found;
    },

    async recall(query) {
      const { orgId, fingerprint } = query;
      const now = query.now ?? Date.now();
      const cutoff = now - query.retentionMs;
      const limit = Math.min(MAX_HISTORY_ENTRIES, query.limit ?? MAX_HISTORY_ENTRIES);
      const redis = options.redis();

      const sees = (teams: readonly string[] | undefined) => query.everyTeam === true || visibleTo(teams, query.callerTeams);
      const scopes = (await redis.smembers(memoryScopesKey(keys, orgId))).filter((scope) => {
        const teams = teamsOfScope(scope);
        return teams !== null && sees(teams);
      });
      const allParts = partsOf(fingerprint);
      const parts = allParts.filter((part) => part.indexed);
      if (scopes.length === 0 || parts.length === 0 || limit <= 0) return [];
      const partKeys = scopes.flatMap((scope) => parts.map((part) => memoryPartKey(keys, orgId, scopeTag(scope), shortHash(partKey(part)))));
      const reads = scopes.flatMap(() => parts.flatMap((part) => [part.weight, part.weight > 1 ? READ_PER_PART.specific : READ_PER_PART.common]));
      const ranked = await recallCandidates(redis, partKeys, [cutoff, CANDIDATES, ...reads]);
      const ids = ranked.filter((id) => id !== fingerprint.id);
      if (ids.length === 0) return [];

      const texts = await redis.mget(ids.map((id) => memoryRecordKey(keys, orgId, id)));
      const scored: Scored[] = [];
      for (const text of texts) {
        const then = parseFingerprint(text);
        // Checked again on the record itself: the index's scope is where it was filed, the record says whose it is.
        if (then === undefined || then.at < cutoff || !sees(then.teams)) continue;
        const comparison = compareParts(allParts, partsOf(then));
        if (comparison.sharesIncident && comparison.similarity >= MIN_SIMILARITY) scored.push({ then, comparison });
      }
      if (scored.length === 0) return [];

      const confirmations =
        options.confirmations === undefined
          ? new Map<string, HistoryConfirmation>()
          : await options.confirmations(
              orgId,
              scored.map(({ then }) => then.id),
            );
      // The best of each group (the most similar; of equals, a confirmed one, then the latest), best groups first.
      const best = new Map<string, Scored>();
      for (const candidate of scored) {
        const group = groupOf(candidate.then);
        const held = best.get(group);
        if (held === undefined || better(candidate, held, confirmations)) best.set(group, candidate);
      }
      const chosen = [...best.entries()].sort(([, a], [, b]) => (better(a, b, confirmations) ? -1 : 1)).slice(0, limit);

      const counts = await occurrences(
        redis,
        chosen.map(([group]) => scopes.map((scope) => memoryGroupKey(keys, orgId, scopeTag(scope), shortHash(group)))),
        cutoff,
      );
      return chosen.map(([, { then, comparison }], index): HistoryEntry => {
        const confirmed = confirmations.get(then.id);
        const counted = counts[index];
        // The group's sets hold `then` unless it expired in between: never fewer than itself.
        const seen =
          counted === undefined || counted.count === 0
            ? { count: 1, first: then.at, last: then.at }
            : { count: counted.count, first: Math.min(counted.first, then.at), last: Math.max(counted.last, then.at) };
        return {
          executionId: then.id,
          at: new Date(then.at).toISOString(),
          playbook: then.playbook,
          conclusion: then.conclusion,
          ...(then.cause === undefined ? {} : { cause: then.cause }),
          ...(then.pageUrl === undefined ? {} : { pageUrl: then.pageUrl }),
          similarity: Math.round(comparison.similarity * 1000) / 1000,
          matched: comparison.matched,
          differed: comparison.differed,
          occurrences: { count: seen.count, first: new Date(seen.first).toISOString(), last: new Date(seen.last).toISOString() },
          ...(confirmed === undefined ? {} : { confirmed }),
        };
      });
    },
  };
}

type Scored = { then: Fingerprint; comparison: Comparison };

function better(a: Scored, b: Scored, confirmations: ReadonlyMap<string, HistoryConfirmation>): boolean {
  if (a.comparison.similarity !== b.comparison.similarity) return a.comparison.similarity > b.comparison.similarity;
  const confirmedA = confirmations.has(a.then.id);
  if (confirmedA !== confirmations.has(b.then.id)) return confirmedA;
  if (a.then.at !== b.then.at) return a.then.at > b.then.at;
  return a.then.id < b.then.id;
}

/** The script's ranked candidate ids (scripts/recall-candidates.lua), loaded once per Redis. */
async function recallCandidates(redis: RedisConnection, keys: readonly string[], args: readonly (string | number)[]): Promise<string[]> {
  let answer: unknown;
  try {
    answer = await redis.evalsha(RECALL_CANDIDATES_SHA, keys.length, ...keys, ...args);
  } catch (error) {
    if (!(error instanceof Error) || !error.message.startsWith("NOSCRIPT")) throw error;
    answer = await redis.eval(RECALL_CANDIDATES, keys.length, ...keys, ...args);
  }
  const flat = Array.isArray(answer) ? answer.map(String) : [];
  const ids: string[] = [];
  for (let index = 0; index < flat.length; index += 3) ids.push(flat[index] ?? "");
  return ids.filter((id) => id !== "");
}

/** For each group (its key in each scope read), how many of its executions are within the retention, the first and the last. */
async function occurrences(
  redis: RedisConnection,
  groups: readonly (readonly string[])[],
  cutoff: number,
): Promise<Array<{ count: number; first: number; last: number }>> {
  const pipeline = redis.pipeline();
  for (const keys of groups) {
    for (const key of keys) {
      pipeline.zcount(key, cutoff, "+inf");
      pipeline.zrangebyscore(key, cutoff, "+inf", "WITHSCORES", "LIMIT", 0, 1);
      pipeline.zrevrangebyscore(key, "+inf", cutoff, "WITHSCORES", "LIMIT", 0, 1);
    }
  }
  const answers = (await pipeline.exec()) ?? [];
  let at = 0;
  return groups.map((keys) => {
    let count = 0;
    let first = Number.POSITIVE_INFINITY;
    let last = Number.NEGATIVE_INFINITY;
    for (let index = 0; index < keys.length; index += 1) {
      const [countAnswer, firstAnswer, lastAnswer] = [answers[at], answers[at + 1], answers[at + 2]];
      at += 3;
      count += Number(countAnswer?.[1] ?? 0);
      const firstScore = Number((firstAnswer?.[1] as string[] | undefined)?.[1]);
      const lastScore = Number((lastAnswer?.[1] as string[] | undefined)?.[1]);
      if (Number.isFinite(firstScore)) first = Math.min(first, firstScore);
      if (Number.isFinite(lastScore)) last = Math.max(last, lastScore);
    }
    return { count, first, last };
  });
}

function parseFingerprint(text: string | null): Fingerprint | undefined {
  if (text === null) return undefined;
  try {
    const parsed = Fingerprint.safeParse(JSON.parse(text));
    return parsed.success && parsed.data.v === FINGERPRINT_VERSION ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
