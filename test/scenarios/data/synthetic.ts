import type { SyntheticSeries } from "@pes/local-services";

/**
 * Building blocks for the scenario data sets: a clock relative to the issue time, shapes (a value as a
 * function of time), deterministic jitter, and series, log lines and documents generated from them. No
 * randomness: the same issue time always gives the same data, so a failing scenario can be replayed.
 */

/** Samples every 15 s, like a typical scrape interval. */
export const SCRAPE_SECONDS = 15;

/** Minutes relative to the issue time, as dates and unix seconds. */
export interface Clock {
  issueAt: Date;
  /** The instant `minutes` after the issue time (negative: before). */
  at(minutes: number): Date;
  /** The same in unix seconds. */
  seconds(minutes: number): number;
}

export function clockAt(issueAt: Date): Clock {
  const base = issueAt.getTime();
  return {
    issueAt,
    at: (minutes) => new Date(base + minutes * 60_000),
    seconds: (minutes) => Math.round((base + minutes * 60_000) / 1000),
  };
}

/** A value as a function of unix seconds. */
export type Shape = (seconds: number) => number;

export const constant =
  (value: number): Shape =>
  () =>
    value;

/** `before` until `at`, `after` from it on. */
export const stepAt =
  (at: number, before: number, after: number): Shape =>
  (t) =>
    t < at ? before : after;

/** `from` until `start`, a straight line to `to` at `end`, then `to`. */
export const ramp =
  (start: number, end: number, from: number, to: number): Shape =>
  (t) =>
    t <= start ? from : t >= end ? to : from + ((to - from) * (t - start)) / (end - start);

/**
 * A number in [0, 1) from a text key and an integer: a small integer hash (FNV-1a, then a 32-bit
 * mix), the same on every machine. Used for jitter and for ids in log lines.
 */
export function hashUnit(key: string, n: number): number {
  let h = 2166136261;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 16777619);
  h = Math.imul(h ^ n, 16777619);
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  h ^= h >>> 12;
  h = Math.imul(h, 0x297a2d39);
  h ^= h >>> 15;
  return (h >>> 0) / 4294967296;
}

/** `shape` with ±`amount` relative jitter, keyed so that two series never jitter alike. */
export const jittered =
  (shape: Shape, key: string, amount = 0.05): Shape =>
  (t) =>
    shape(t) * (1 + amount * (2 * hashUnit(key, t) - 1));

/** Sample instants from `from` to `to` (unix seconds), every SCRAPE_SECONDS. */
export function sampleTimes(from: number, to: number): number[] {
  const times: number[] = [];
  for (let t = Math.ceil(from / SCRAPE_SECONDS) * SCRAPE_SECONDS; t <= to; t += SCRAPE_SECONDS) times.push(t);
  return times;
}

/** A gauge sampled over `times`; `shape` returning NaN leaves the sample out (a series that is not there). */
export function gauge(name: string, labels: Record<string, string>, times: readonly number[], shape: Shape): SyntheticSeries {
  const samples = times.map((t) => [t, shape(t)] as const).filter(([, value]) => !Number.isNaN(value));
  return { name, labels, type: "gauge", samples };
}

/**
 * A counter growing at `perSecond` (NaN: the series is absent then, as a pod before it started or after
 * it was replaced). Written as `unknown` type, as the demo history is, so that promtool keeps the
 * `_total` name and PromQL's rate() reads it as any counter.
 */
export function counter(name: string, labels: Record<string, string>, times: readonly number[], perSecond: Shape): SyntheticSeries {
  let total = 0;
  const samples: Array<readonly [number, number]> = [];
  for (const t of times) {
    const rate = perSecond(t);
    if (Number.isNaN(rate)) continue;
    total += Math.max(0, rate) * SCRAPE_SECONDS;
    samples.push([t, Math.round(total * 1000) / 1000]);
  }
  return { name, labels, type: "unknown", samples };
}

/** Latency histogram bucket bounds in seconds. */
export const LATENCY_BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

/**
 * `<name>_bucket` counters of a latency histogram with `buckets` (bounds in seconds): `perSecond`
 * requests whose latency is exponential with mean `meanSeconds` (so p90 ≈ 2.3 × the mean, p99 ≈ 4.6 ×).
 */
export function latencyHistogram(
  name: string,
  labels: Record<string, string>,
  times: readonly number[],
  perSecond: Shape,
  meanSeconds: Shape,
  buckets: readonly number[] = LATENCY_BUCKETS,
): SyntheticSeries[] {
  const bounds = [...buckets.map(String), "+Inf"];
  return bounds.map((le) =>
    counter(`${name}_bucket`, { ...labels, le }, times, (t) => {
      const share = le === "+Inf" ? 1 : 1 - Math.exp(-Number(le) / meanSeconds(t));
      return perSecond(t) * share;
    }),
  );
}

/** One log line at an instant. */
export interface TimedLine {
  at: Date;
  line: string;
}

/**
 * Lines at `perMinute` (a shape; fractions carry over, so 0.25 is one line every 4 minutes) from `from`
 * to `to` (dates), each placed at a deterministic second of its minute and written by `render(n, at)`
 * with a running number `n` for ids.
 */
export function linesAt(key: string, from: Date, to: Date, perMinute: Shape, render: (n: number, at: Date) => string): TimedLine[] {
  const lines: TimedLine[] = [];
  let carry = 0;
  let n = 0;
  for (let minute = Math.floor(from.getTime() / 60_000); minute * 60_000 < to.getTime(); minute++) {
    carry += perMinute(minute * 60);
    const count = Math.floor(carry);
    carry -= count;
    for (let i = 0; i < count; i++) {
      const offsetMs = Math.floor(((i + hashUnit(key, minute * 97 + i)) / count) * 60_000);
      const at = new Date(minute * 60_000 + offsetMs);
      if (at < from || at >= to) continue;
      lines.push({ at, line: render(n, at) });
      n += 1;
    }
  }
  return lines;
}

/** A short deterministic hex id (a pod suffix, a trace id). */
export function hexId(key: string, n: number, length = 8): string {
  let text = "";
  for (let i = 0; text.length < length; i++)
    text += Math.floor(hashUnit(key, n * 31 + i) * 0x10000)
      .toString(16)
      .padStart(4, "0");
  return text.slice(0, length);
}

/** A Kubernetes-style pod suffix: five lowercase consonant-or-digit characters. */
export function podSuffix(key: string, n: number): string {
  const alphabet = "bcdfghjklmnpqrstvwxz2456789";
  let text = "";
  for (let i = 0; i < 5; i++) text += alphabet[Math.floor(hashUnit(key, n * 7 + i) * alphabet.length)];
  return text;
}
