import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { MAX_HISTORY_ENTRIES, type ExecutionHistory, type HistoryConfirmation, type HistoryEntry } from "@pes/contracts";
import {
  memoryContentKey,
  memoryGroupKey,
  memoryPartKey,
  memoryPrefix,
  memoryRecordKey,
  memoryScopesKey,
  type KeySpace,
  type RedisConnection,
} from "@pes/jobs";
import { Fingerprint, FINGERPRINT_VERSION, groupOf } from "./fingerprint.js";
import { compareParts, partKey, partsOf, type Comparison, type Part } from "./similarity.js";
import { scopeOf, scopeTag, shortHash, visibleTo } from "./team-scope.js";

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
   * scope's index, trimming what the retention let go of in the sets it writes: one script
   * (scripts/remember-fingerprint.lua), whose index grows with distinct contents, not with the executions
   * of a storm. A fingerprint already older than the retention is not kept; one with no part that
   * identifies an incident keeps its record only.
   */
  remember(orgId: string, fingerprint: Fingerprint, retentionMs: number, now?: number): Promise<void>;
  /**
   * The few past executions most like this one that the caller may see (see RecallQuery), most similar
   * first, each of another cause (or set of symptoms): what matched and what differed, how often and when
   * such executions happened, what someone confirmed of them. Empty when none is similar enough.
   */
  recall(query: RecallQuery): Promise<ExecutionHistory>;
  /**
   * recall, then remember the fingerprint (a finished execution's, with the organization's retention),
   * in one round trip to Redis: what the recall reads is read before the fingerprint is written, so that
   * it never recalls itself nor counts itself.
   */
  recallAndRemember(query: RecallQuery): Promise<ExecutionHistory>;
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
 * Of each part's index set, the most recent contents read per recall: fewer of a part that many executions
 * share (weight 1: a symptom's kind, the playbook, an attribute), which finds no candidate the others miss.
 */
const READ_PER_PART = { specific: 200, common: 50 } as const;
/** Contents scored exactly, of those the script ranks: each of them compared once, whatever its executions. */
const CONTENTS = 40;
/** Without a feedback index: the executions the confirmation lookup is asked about (each content's latest, then more of the best). */
const CANDIDATES = 40;
/** An index set keeps its most recent contents only (the groups keep every execution, for the counts). */
export const MAX_PART_MEMBERS = 5_000;
/** Below this similarity a past execution is not shown. */
export const MIN_SIMILARITY = 0.35;

const REMEMBER = luaScript("remember-fingerprint");
const RECALL_CANDIDATES = luaScript("recall-candidates");

/** What one script call runs: the script, its keys and its arguments. */
type ScriptCall = { script: LuaScript; keys: string[]; args: (string | number)[] };

/** The memory on a connection its caller owns (the worker's producer connection). */
export function createExecutionMemory(options: {
  redis: () => RedisConnection;
  keys: KeySpace;
  confirmations?: ConfirmationLookup;
  /**
   * The key of a sorted set holding every execution of the organization someone confirmed (and maybe
   * more: the feedback store's index): the recall reads which candidates are in it, and the lookup is
   * asked about those alone (usually none: no round trip). None: it is asked about every candidate.
   */
  confirmedIndex?: (orgId: string) => string;
}): ExecutionMemory {
  const { keys } = options;

  /** The script call that remembers a fingerprint, or, for one naming no incident, only its record; none when past the retention. */
  function rememberCall(orgId: string, fingerprint: Fingerprint, parts: readonly Part[], retentionMs: number, now: number): ScriptCall | "record" | undefined {
    const ttlMs = Math.ceil(fingerprint.at + retentionMs - now);
    if (ttlMs <= 0) return undefined;
    // No part that identifies an incident: never an entry (an entry shares such a part) nor counted in
    // one (its group is of no incident). Only its record is kept, for fingerprint().
    if (!parts.some((part) => part.incident)) return "record";
    // A set lives a retention after its last write: by then each of its members is past the retention.
    const setTtlMs = Math.max(retentionMs, ttlMs);
    const scope = scopeOf(fingerprint.teams);
    const tag = scopeTag(scope);
    const content = contentOf(parts);
    const group = shortHash(groupOf(fingerprint));
    const indexed = parts.filter((part) => part.indexed).map((part) => memoryPartKey(keys, orgId, tag, shortHash(partKey(part))));
    return {
      script: REMEMBER,
      keys: [
        memoryRecordKey(keys, orgId, fingerprint.id),
        memoryContentKey(keys, orgId, tag, content),
        memoryGroupKey(keys, orgId, tag, group),
        memoryScopesKey(keys, orgId),
        ...indexed,
      ],
      args: [
        fingerprint.id,
        fingerprint.at,
        JSON.stringify(fingerprint),
        ttlMs,
        now - retentionMs,
        setTtlMs,
        `${group}:${content}`,
        scope,
        tag,
        MAX_PART_MEMBERS,
      ],
    };
  }

  /** Keeps only a fingerprint's record, to the end of its retention. */
  async function rememberRecord(orgId: string, fingerprint: Fingerprint, retentionMs: number, now: number): Promise<void> {
    await options.redis().set(memoryRecordKey(keys, orgId, fingerprint.id), JSON.stringify(fingerprint), "PX", Math.ceil(fingerprint.at + retentionMs - now));
  }

  /** The script call that reads what a recall needs (scripts/recall-candidates.lua). */
  function recallCall(query: RecallQuery, parts: readonly Part[], cutoff: number): ScriptCall {
    const reads = parts
      .filter((part) => part.indexed)
      .flatMap((part) => [shortHash(partKey(part)), part.weight, part.weight > 1 ? READ_PER_PART.specific : READ_PER_PART.common]);
    return {
      script: RECALL_CANDIDATES,
      keys: [memoryScopesKey(keys, query.orgId)],
      args: [
        memoryPrefix(keys, query.orgId),
        cutoff,
        CONTENTS,
        CANDIDATES,
        // The execution recalling (a retried job, or one asked about) is never its own past.
        query.fingerprint.id,
        query.everyTeam === true ? "1" : JSON.stringify(query.callerTeams ?? []),
        options.confirmations === undefined ? "" : (options.confirmedIndex?.(query.orgId) ?? ""),
        ...reads,
      ],
    };
  }

  /** Recalls and, when `retentionMs` is given, remembers `query.fingerprint` after, in one round trip. */
  async function recallThen(query: RecallQuery, remember: { retentionMs: number } | undefined): Promise<ExecutionHistory> {
    const { orgId, fingerprint } = query;
    const now = query.now ?? Date.now();
    const cutoff = now - query.retentionMs;
    const limit = Math.min(MAX_HISTORY_ENTRIES, query.limit ?? MAX_HISTORY_ENTRIES);
    const parts = partsOf(fingerprint);
    const remembering = remember === undefined ? undefined : rememberCall(orgId, fingerprint, parts, remember.retentionMs, now);
    // An entry shares a part that identifies an incident: without one, there is nothing to read.
    const recalling = limit > 0 && parts.some((part) => part.incident);
    if (remembering === "record") await rememberRecord(orgId, fingerprint, remember?.retentionMs ?? 0, now);
    const calls = [...(recalling ? [recallCall(query, parts, cutoff)] : []), ...(typeof remembering === "object" ? [remembering] : [])];
    if (calls.length === 0) return [];
    const [read] = await runScripts(options.redis(), calls);
    return recalling ? entriesOf(read, query, parts, cutoff, limit) : [];
  }

  /** The entries of what the recall script read: each content compared once, the best of each group, what someone confirmed. */
  async function entriesOf(read: unknown, query: RecallQuery, nowParts: readonly Part[], cutoff: number, limit: number): Promise<ExecutionHistory> {
    const { orgId } = query;
    const sees = (teams: readonly string[] | undefined) => query.everyTeam === true || visibleTo(teams, query.callerTeams);
    const { contents, counts } = recallRead(read);
    // The executions of one content have the same parts: each content is compared once, on its latest's record.
    const scored: ScoredContent[] = [];
    for (const { group, record, ids } of contents) {
      const then = parseFingerprint(record);
      // Checked again on the record itself: the index's scope is where it was filed, the record says whose it is.
      if (then === undefined || then.at < cutoff || !sees(then.teams)) continue;
      const comparison = compareParts(nowParts, partsOf(then));
      if (comparison.sharesIncident && comparison.similarity >= MIN_SIMILARITY) scored.push({ latest: then, group, ids, comparison });
    }
    if (scored.length === 0) return [];

    const candidates = scored.flatMap((content) => content.ids.map((recalled): Candidate => ({ ...recalled, content })));
    const asked = candidates.filter(({ confirmed }) => confirmed).map(({ id }) => id);
    const confirmations =
      options.confirmations === undefined || asked.length === 0 ? new Map<string, HistoryConfirmation>() : await options.confirmations(orgId, asked);
    // The best of each group (the most similar; of equals, a confirmed one, then the latest), best groups first.
    const best = new Map<string, Candidate>();
    for (const candidate of candidates) {
      const held = best.get(candidate.content.group);
      if (held === undefined || better(candidate, held, confirmations)) best.set(candidate.content.group, candidate);
    }
    const chosen = [...best.values()].sort((a, b) => (better(a, b, confirmations) ? -1 : 1)).slice(0, limit);

    // A chosen execution other than its content's latest (a confirmed one) is read for its own page link.
    const others = chosen.filter(({ id, content }) => id !== content.latest.id).map(({ id }) => id);
    const otherRecords = new Map<string, Fingerprint>();
    if (others.length > 0) {
      const texts = await options.redis().mget(others.map((id) => memoryRecordKey(keys, orgId, id)));
      texts.forEach((text, index) => {
        const then = parseFingerprint(text);
        if (then !== undefined && sees(then.teams)) otherRecords.set(others[index] ?? "", then);
      });
    }
    return chosen.map((candidate): HistoryEntry => {
      const then = otherRecords.get(candidate.id) ?? candidate.content.latest;
      const { comparison, group } = candidate.content;
      const confirmed = confirmations.get(then.id);
      const counted = counts.get(group);
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
  }

  return {
    async remember(orgId, fingerprint, retentionMs, now = Date.now()) {
      const call = rememberCall(orgId, fingerprint, partsOf(fingerprint), retentionMs, now);
      if (call === "record") await rememberRecord(orgId, fingerprint, retentionMs, now);
      else if (call !== undefined) await runScripts(options.redis(), [call]);
    },

    async fingerprint(orgId, executionId, callerTeams, retentionMs, now = Date.now()) {
      const found = parseFingerprint(await options.redis().get(memoryRecordKey(keys, orgId, executionId)));
      return found === undefined || found.at < now - retentionMs || !visibleTo(found.teams, callerTeams) ? undefined : found;
    },

    recall: (query) => recallThen(query, undefined),

    recallAndRemember: (query) => recallThen(query, { retentionMs: query.retentionMs }),
  };
}

/** A remembered content that is similar enough: its latest execution's fingerprint, its group (hash), its executions read, and how it compares. */
type ScoredContent = { latest: Fingerprint; group: string; ids: readonly RecalledId[]; comparison: Comparison };
/** An execution of a recalled content: its id, issue time, and whether the confirmations are asked about it. */
type RecalledId = { id: string; at: number; confirmed: boolean };
/** One execution of a scored content. */
type Candidate = RecalledId & { content: ScoredContent };

function better(a: Candidate, b: Candidate, confirmations: ReadonlyMap<string, HistoryConfirmation>): boolean {
  const [similarityA, similarityB] = [a.content.comparison.similarity, b.content.comparison.similarity];
  if (similarityA !== similarityB) return similarityA > similarityB;
  const confirmedA = confirmations.has(a.id);
  if (confirmedA !== confirmations.has(b.id)) return confirmedA;
  if (a.at !== b.at) return a.at > b.at;
  return a.id < b.id;
}

/** A fingerprint's content: its parts, which executions of one incident share, hashed (the member of the index sets). */
function contentOf(parts: readonly Part[]): string {
  return shortHash(JSON.stringify(parts.map((part) => [part.field, part.value])));
}

/** A script of ../scripts, and its SHA-1 for EVALSHA. */
type LuaScript = { text: string; sha: string };

function luaScript(name: string): LuaScript {
  const text = readFileSync(new URL(`../scripts/${name}.lua`, import.meta.url), "utf8");
  return { text, sha: createHash("sha1").update(text).digest("hex") };
}

/**
 * Runs script calls in order in one round trip (a pipeline), each by its SHA-1; on a Redis that does not
 * hold one yet (NOSCRIPT), loads them and runs them again (they write nothing twice that matters: a
 * remembered fingerprint is written again as it was). Resolves with their answers; rejects with the first error.
 */
async function runScripts(redis: RedisConnection, calls: readonly ScriptCall[]): Promise<unknown[]> {
  const run = async () => {
    const pipeline = redis.pipeline();
    for (const { script, keys, args } of calls) pipeline.evalsha(script.sha, keys.length, ...keys, ...args);
    return (await pipeline.exec()) ?? [];
  };
  let answers = await run();
  if (answers.some(([error]) => error instanceof Error && error.message.startsWith("NOSCRIPT"))) {
    for (const script of new Set(calls.map((call) => call.script))) await redis.script("LOAD", script.text);
    answers = await run();
  }
  const failed = answers.find(([error]) => error !== null)?.[0];
  if (failed) throw failed;
  if (answers.length !== calls.length) throw new Error("the memory's scripts were not all answered");
  return answers.map(([, answer]) => answer);
}

/** What the recall script read (scripts/recall-candidates.lua): the best contents, best first, and their groups' counts. */
function recallRead(answer: unknown): {
  contents: { group: string; record: string | null; ids: RecalledId[] }[];
  counts: Map<string, { count: number; first: number; last: number }>;
} {
  const [rows, flatCounts] = Array.isArray(answer) ? answer : [];
  const contents = (Array.isArray(rows) ? rows : []).map((row: unknown) => {
    const fields: unknown[] = Array.isArray(row) ? row : [];
    const ids: RecalledId[] = [];
    for (let index = 4; index + 2 < fields.length; index += 3) {
      ids.push({ id: String(fields[index]), at: Number(fields[index + 1]), confirmed: fields[index + 2] === "1" });
    }
    return { group: String(fields[0]), record: typeof fields[3] === "string" ? fields[3] : null, ids };
  });
  const counts = new Map<string, { count: number; first: number; last: number }>();
  const flat: unknown[] = Array.isArray(flatCounts) ? flatCounts : [];
  for (let index = 0; index + 3 < flat.length; index += 4) {
    counts.set(String(flat[index]), { count: Number(flat[index + 1]), first: Number(flat[index + 2]), last: Number(flat[index + 3]) });
  }
  return { contents, counts };
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
