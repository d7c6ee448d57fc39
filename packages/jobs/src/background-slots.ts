import { performance } from "node:perf_hooks";

/** How often the share of time the event loop was busy is read. */
const INTERVAL_MS = 200;
/** Busier than this, background work gives half its slots away: what someone waits for needs the CPU. */
const BUSY = 0.65;
/** Less busy than this, background work takes one slot back per interval, up to its limit. */
const IDLE = 0.4;

/** What one interval showed: how busy the event loop was, and whether foreground jobs ran in it. */
export interface Interval {
  /** The share of the interval the event loop was busy, 0-1 (`performance.eventLoopUtilization`). */
  utilization: number;
  /** A job of another queue ran in the interval: someone may be waiting for it. */
  foreground: boolean;
}

/**
 * How many background jobs may run at once next, from how many may now, the last interval and the
 * configured limit: with no foreground job, the limit; with one, halved (never below one) while the
 * event loop is busy, one more while it is idle, unchanged in between. Multiplicative decrease and
 * additive increase: foreground work gets the CPU within an interval or two of asking, and the
 * background climbs back slowly while it runs.
 */
export function nextBackgroundSlots(current: number, interval: Interval, limit: number): number {
  if (!interval.foreground) return limit;
  if (interval.utilization > BUSY) return Math.max(1, Math.floor(current / 2));
  if (interval.utilization < IDLE) return Math.min(limit, current + 1);
  return Math.min(limit, current);
}

/**
 * Adjusts a background queue's concurrency to the CPU this process has to spare while foreground jobs
 * run, read every 200 ms (nextBackgroundSlots). Background jobs that wait on slow data sources leave the
 * event loop idle and keep every slot; jobs whose work is CPU (an instant data source, a large answer to
 * read) give their slots up until the foreground's jobs find the CPU they need, and take them all back
 * when no foreground job is left. Fewer slots take effect as running jobs finish (BullMQ's `concurrency`).
 * `foreground()` says whether a foreground job ran since it was last asked.
 */
export function governBackgroundSlots(limit: number, foreground: () => boolean, apply: (slots: number) => void): { stop(): void } {
  let slots = limit;
  let last = performance.eventLoopUtilization();
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const next = nextBackgroundSlots(slots, { utilization: performance.eventLoopUtilization(now, last).utilization, foreground: foreground() }, limit);
    last = now;
    if (next === slots) return;
    slots = next;
    apply(slots);
  }, INTERVAL_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
