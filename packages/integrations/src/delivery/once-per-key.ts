import { randomUUID } from "node:crypto";
import type { Cluster, Redis } from "ioredis";
import { errorMessage } from "@pes/contracts";

/**
 * What one try of a side effect (a Slack post, an incident note) did. `notDone`: certainly nothing
 * happened (the service refused it, or it was never sent), so a later try may do it. `unsure`: it may have
 * happened (a timeout, a dropped connection, a 5xx), so a later try looks for its trace first.
 */
export type AttemptOutcome<T> = { done: T } | { notDone: string } | { unsure: string };

/** `done`: the side effect happened exactly once, by this call or an earlier one (`byThisCall` false). */
export type OnceOutcome<T> = { status: "done"; value: T; byThisCall: boolean } | { status: "failed"; reason: string };

export interface OncePerKeyOptions<T> {
  /** One Redis or a Redis Cluster: single-key commands and scripts only. */
  redis: Redis | Cluster;
  /** The Redis key recording this side effect (one per execution and target, with the caller's prefix). */
  key: string;
  /**
   * How long this try may hold the claim: one that has neither finished nor given up by then is presumed
   * dead (its worker crashed), and the next try looks for its trace. Longer than this try can run (until
   * its deadline, plus its last request's timeout); it is stored with the claim, so that each try's own
   * lease applies to it.
   */
  leaseMs: number;
  /** How long the record is kept: longer than the job can still be retried. */
  retainMs: number;
  perform(): Promise<AttemptOutcome<T>>;
  /**
   * Looks for what an earlier, unfinished try may have done (a message or note carrying its mark) since
   * `sinceMs` (epoch ms); throws when it cannot tell. Without it, such a try is never repeated.
   */
  find?(sinceMs: number): Promise<T | undefined>;
  encode(value: T): string;
  decode(text: string): T | undefined;
}

/** pending: a try holds the claim since `at`, presumed dead after `until`; unsure: a try that may have done it began at `at`. */
type Record = { s: "pending"; token: string; at: number; until: number } | { s: "unsure"; at: number } | { s: "done"; v: string };

/** An earlier try's trace is searched from a little before it claimed the key (clocks of workers differ). */
const FIND_MARGIN_MS = 60_000;
const MAX_ROUNDS = 3;

/** KEYS[1] key; ARGV[1] expected value; ARGV[2] new value ('' deletes); ARGV[3] TTL in ms. 1 when swapped. */
const COMPARE_AND_SET = `if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == '' then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) end
return 1`;

/**
 * Runs a side effect at most once per key, across retries of a job and across workers, with a record in
 * Redis: a try first claims the key (`SET NX`), and records what it did once it knows. A retry that finds
 * the side effect done returns its value without repeating it; one that finds an unsure or abandoned try
 * looks for that try's trace (`find`) and does it only when there is none. Redis unreachable means
 * nothing is done: a side effect is never performed without its record.
 */
export async function runOncePerKey<T>(options: OncePerKeyOptions<T>): Promise<OnceOutcome<T>> {
  const { redis, key, retainMs } = options;
  try {
    for (let round = 0; round < MAX_ROUNDS; round += 1) {
      const now = Date.now();
      const claim: Record = { s: "pending", token: randomUUID(), at: now, until: now + options.leaseMs };
      const claimText = JSON.stringify(claim);
      if ((await redis.set(key, claimText, "PX", retainMs, "NX")) === "OK") return await attempt(options, claimText);

      const currentText = await redis.get(key);
      if (currentText === null) continue; // expired in between: claim again
      const current = parseRecord(currentText);
      if (current?.s === "done") {
        const value = options.decode(current.v);
        if (value !== undefined) return { status: "done", value, byThisCall: false };
      }
      if (current?.s === "pending" && Date.now() < current.until) {
        return { status: "failed", reason: "another attempt of the same execution is doing it now" };
      }
      // Unsure, abandoned or unreadable: what did that try do?
      const since = (current !== undefined && current.s !== "done" ? current.at : Date.now() - options.leaseMs) - FIND_MARGIN_MS;
      if (options.find === undefined) {
        return { status: "failed", reason: "an earlier attempt may have done it already; not repeating it" };
      }
      let found: T | undefined;
      try {
        found = await options.find(since);
      } catch (error) {
        return { status: "failed", reason: `an earlier attempt may have done it already, and looking for it failed: ${errorMessage(error)}` };
      }
      if (found !== undefined) {
        await compareAndSet(redis, key, currentText, JSON.stringify({ s: "done", v: options.encode(found) } satisfies Record), retainMs);
        return { status: "done", value: found, byThisCall: false };
      }
      if (await compareAndSet(redis, key, currentText, claimText, retainMs)) return await attempt(options, claimText);
      // Another try changed the record meanwhile: read it again.
    }
    return { status: "failed", reason: "other attempts of the same execution keep changing its record" };
  } catch (error) {
    return { status: "failed", reason: `cannot record it in Redis: ${errorMessage(error)}` };
  }
}

async function attempt<T>(options: OncePerKeyOptions<T>, claimText: string): Promise<OnceOutcome<T>> {
  const { redis, key, retainMs } = options;
  let tried: AttemptOutcome<T>;
  try {
    tried = await options.perform();
  } catch (error) {
    tried = { unsure: errorMessage(error) };
  }
  if ("done" in tried) {
    // Unconditional: it happened, whatever another try wrote meanwhile. Should Redis fail now, the claim
    // stays pending: a retry after the lease finds the trace instead of doing it again.
    await redis.set(key, JSON.stringify({ s: "done", v: options.encode(tried.done) } satisfies Record), "PX", retainMs).catch(() => undefined);
    return { status: "done", value: tried.done, byThisCall: true };
  }
  if ("notDone" in tried) {
    await compareAndSet(redis, key, claimText, "", retainMs);
    return { status: "failed", reason: tried.notDone };
  }
  const claim = parseRecord(claimText);
  const at = claim?.s === "pending" ? claim.at : Date.now();
  await compareAndSet(redis, key, claimText, JSON.stringify({ s: "unsure", at } satisfies Record), retainMs);
  return { status: "failed", reason: tried.unsure };
}

async function compareAndSet(redis: Redis | Cluster, key: string, expected: string, next: string, ttlMs: number): Promise<boolean> {
  return (await redis.eval(COMPARE_AND_SET, 1, key, expected, next, ttlMs)) === 1;
}

function parseRecord(text: string): Record | undefined {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== "object" || value === null || !("s" in value)) return undefined;
    if (value.s === "done" && "v" in value && typeof value.v === "string") return { s: "done", v: value.v };
    if (!("at" in value) || typeof value.at !== "number") return undefined;
    if (value.s === "unsure") return { s: "unsure", at: value.at };
    if (value.s === "pending" && "token" in value && typeof value.token === "string" && "until" in value && typeof value.until === "number") {
      return { s: "pending", token: value.token, at: value.at, until: value.until };
    }
    return undefined;
  } catch {
    return undefined;
  }
}
