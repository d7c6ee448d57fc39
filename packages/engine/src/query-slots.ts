import { formatDuration } from "@pes/analysis";
import { errorMessage } from "@pes/contracts";

/** One data source's limit: `max` queries at once, under `key` (its organization and name). */
export interface QuerySlotLimit {
  key: string;
  max: number;
  /** The data source's name, for the reason an action gives when it got no slot. */
  dataSource: string;
}

/**
 * Where the engine takes the query slots of a data source that sets `maxConcurrentQueries`. The worker
 * passes slots shared through Redis (`createRedisQuerySlots` in @pes/jobs), so that the limit holds
 * across all workers; the default, `createLocalQuerySlots`, holds it within one engine.
 */
export interface QuerySlots {
  /**
   * Takes one of `max` slots of `key`, waiting for one to free. A slot a holder never gives back (its
   * process died) frees itself after `leaseMs`.
   * @returns the release, to call once the query is done.
   * @throws the signal's reason when it aborts first, or why the slots could not be reached.
   */
  acquire(request: { key: string; max: number; leaseMs: number; signal: AbortSignal }): Promise<() => Promise<void>>;
  /**
   * Counts one query of `key` (`<org>/<data source>`) in its last minute, if fewer than `max` were
   * counted there: the per-minute budget of an organization on a data source, shared as the slots are.
   * A refused query is not counted.
   * @returns false when the last minute already holds `max` queries of `key`: the query must not start.
   * @throws why the count could not be reached.
   */
  takeQueryOfMinute(request: { key: string; max: number }): Promise<boolean>;
}

/** A minute, as the per-minute budget counts it: a sliding one, ending now. */
export const QUERY_MINUTE_MS = 60_000;

/** An organization's queries per minute on one of its data sources, under `key` (its organization and name). */
export interface QueryMinuteLimit {
  key: string;
  max: number;
  dataSource: string;
}

/** An action that got no query slot: its reason is the action's short answer. */
export class NoQuerySlotError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "NoQuerySlotError";
  }
}

/**
 * Runs `task` holding one of the data source's query slots (none needed without a limit). The wait counts
 * in the action's deadline (`timeoutMs`, which `signal` enforces): a deadline that passes first is a
 * NoQuerySlotError saying so; a cancellation rethrows the signal's reason. A release that fails is reported
 * to `onReleaseError` (the slot frees itself at its lease's end).
 */
export async function inQuerySlot<T>(
  slots: QuerySlots,
  limit: QuerySlotLimit | undefined,
  options: { timeoutMs: number; leaseMs: number; signal: AbortSignal; onReleaseError: (error: unknown) => void },
  task: () => Promise<T>,
): Promise<T> {
  if (limit === undefined) return task();
  const { signal } = options;
  let release: () => Promise<void>;
  try {
    release = await slots.acquire({ key: limit.key, max: limit.max, leaseMs: options.leaseMs, signal });
  } catch (error) {
    const slotsOf = `${limit.max === 1 ? "the one query slot" : `one of the ${limit.max} query slots`} of data source ${limit.dataSource}`;
    if (signal.aborted && isTimeout(signal.reason)) throw new NoQuerySlotError(`waited ${formatDuration(options.timeoutMs)} for ${slotsOf}`);
    if (signal.aborted) throw error;
    throw new NoQuerySlotError(`could not take ${slotsOf}: ${errorMessage(error)}`);
  }
  try {
    return await task();
  } finally {
    release().catch(options.onReleaseError);
  }
}

/** The engine's deadline aborts with a TimeoutError DOMException (not an Error subclass in every runtime). */
function isTimeout(reason: unknown): boolean {
  return typeof reason === "object" && reason !== null && "name" in reason && reason.name === "TimeoutError";
}

/**
 * Query slots within one process: enough for an engine on its own (tests, one worker). Waiters are served
 * in the order they came; one whose signal aborts leaves the line.
 */
export function createLocalQuerySlots(now: () => number = () => performance.now()): QuerySlots {
  const byKey = new Map<string, { active: number; waiting: Array<() => void> }>();
  // When each query counted in the last minute started, oldest first, by key.
  const minutes = new Map<string, number[]>();
  return {
    async takeQueryOfMinute({ key, max }) {
      const at = now();
      let started = minutes.get(key);
      if (started === undefined) {
        started = [];
        minutes.set(key, started);
      }
      let expired = 0;
      while (expired < started.length && (started[expired] ?? at) <= at - QUERY_MINUTE_MS) expired += 1;
      if (expired > 0) started.splice(0, expired);
      if (started.length >= max) return false;
      started.push(at);
      return true;
    },
    acquire({ key, max, leaseMs, signal }) {
      signal.throwIfAborted();
      let slot = byKey.get(key);
      if (slot === undefined) {
        slot = { active: 0, waiting: [] };
        byKey.set(key, slot);
      }
      const held = slot;
      let released = false;
      let lease: NodeJS.Timeout | undefined;
      const release = async () => {
        if (released) return;
        released = true;
        clearTimeout(lease);
        const next = held.waiting.shift();
        if (next !== undefined) next();
        else held.active -= 1;
      };
      // As in Redis, a slot whose holder never gives it back (an action ignoring its signal) frees itself.
      const leased = () => {
        lease = setTimeout(() => void release(), leaseMs);
        lease.unref();
        return release;
      };
      if (held.active < max) {
        held.active += 1;
        return Promise.resolve(leased());
      }
      return new Promise((resolve, reject) => {
        // The slot passes straight to the next waiter: `active` counts it still.
        const take = () => {
          signal.removeEventListener("abort", leave);
          resolve(leased());
        };
        const leave = () => {
          held.waiting.splice(held.waiting.indexOf(take), 1);
          reject(signal.reason);
        };
        held.waiting.push(take);
        signal.addEventListener("abort", leave, { once: true });
      });
    },
  };
}
