import { describe, expect, it } from "vitest";
import { shortAnswer } from "./evidence-text.js";
import type { LogPatternEvidence, TimeWindow } from "./evidence.js";
import { analyzeLogs, incidentPhaseStart, type LogCount, type LogLine } from "./log-analysis.js";

const time = new Date("2026-11-20T14:08:00Z");
const window: TimeWindow = { start: new Date("2026-11-20T13:08:00Z"), time, end: new Date("2026-11-20T14:23:00Z") };
const ONSET = Date.parse("2026-11-20T14:05:00Z");
const context = { action: "Error logs", window, link: "https://grafana.example/explore" };
const HOUR = 3_600_000;

/** A small deterministic generator (mulberry32), so that the noise is the same on every run. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const PATHS = ["/api/cart", "/api/checkout", "/api/orders", "/healthz", "/api/payment"];
const USERS = ["alice", "bob", "carol", "dave", "erin", "frank"];

/**
 * A checkout service's log over the window: requests (~30/min, varying paths, ids, durations), cache
 * misses (~2/min), retries (~1/min), pod names from a rollout, and a sprinkling of rare one-off lines.
 * `extra` adds lines per second of the window.
 */
function serviceLog(seed: number, extra?: (at: number, next: () => number) => string | undefined): LogLine[] {
  const next = random(seed);
  const lines: LogLine[] = [];
  for (let at = window.start.getTime(); at <= window.end.getTime(); at += 1000) {
    const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)] as T;
    const pod = `checkout-7d9f8b6c4-${pick(["x2k4p", "q8z1m", "b7n3v"])}`;
    if (next() < 0.5) {
      const status = next() < 0.98 ? 200 : 404;
      lines.push({
        at: new Date(at),
        line: `${new Date(at).toISOString()} INFO pod=${pod} GET ${pick(PATHS)} status=${status} duration=${Math.round(next() * 300)}ms req=${Math.floor(next() * 1e9).toString(16)}a1`,
      });
    }
    if (next() < 2 / 60) lines.push({ at: new Date(at), line: `WARN cache miss for key cart:${Math.floor(next() * 1e5)} user=${pick(USERS)}` });
    if (next() < 1 / 60)
      lines.push({ at: new Date(at), line: `WARN retrying call to inventory (attempt ${1 + Math.floor(next() * 3)}) after ${Math.round(next() * 900)}ms` });
    if (next() < 1 / 600)
      lines.push({
        at: new Date(at),
        line: `INFO ${pick(["gc pause", "config reloaded", "rebalanced", "compacted"])} ${pick(["quickly", "slowly", "again"])} ${pick(["now", "later", "soon"])} ok`,
      });
    const more = extra?.(at, next);
    if (more !== undefined) lines.push({ at: new Date(at), line: more });
  }
  return lines;
}

/** Counts per minute of the lines, as a source's count query gives them. */
function perMinute(lines: readonly LogLine[]): LogCount[] {
  const counts = new Map<number, number>();
  for (const { at } of lines) {
    const minute = Math.floor(at.getTime() / 60_000) * 60_000;
    counts.set(minute, (counts.get(minute) ?? 0) + 1);
  }
  return [...counts].map(([at, count]) => ({ at: new Date(at), count })).sort((a, b) => a.at.getTime() - b.at.getTime());
}

/** The latest `limit` lines of each phase, as a source that reads newest first hands them. */
function sampled(lines: readonly LogLine[], limit: number): LogLine[] {
  const split = incidentPhaseStart(window).getTime();
  const newest = (part: LogLine[]) => part.sort((a, b) => b.at.getTime() - a.at.getTime()).slice(0, limit);
  return [...newest(lines.filter((item) => item.at.getTime() < split)), ...newest(lines.filter((item) => item.at.getTime() >= split))];
}

describe("analyzeLogs", () => {
  it("names a new pattern in a noisy log, with its count, onset and an example", () => {
    const lines = serviceLog(1, (at, next) =>
      at >= ONSET && next() < 20 / 60 ? `ERROR connection refused to 10.0.3.${7 + Math.floor(next() * 2)}:5432 (pool checkout-db)` : undefined,
    );
    const found = analyzeLogs({ lines, totals: perMinute(lines) }, context);
    expect(found).toHaveLength(1);
    const [first] = found as [LogPatternEvidence];
    expect(first).toMatchObject({
      kind: "log-pattern",
      action: "Error logs",
      link: "https://grafana.example/explore",
      pattern: "ERROR connection refused to <ip>:<num> (pool checkout-db)",
      baselinePerMinute: 0,
      ratio: Infinity,
      abnormal: true,
      baselineMs: HOUR,
    });
    expect(first.onset?.getTime()).toBeGreaterThanOrEqual(ONSET);
    expect(first.onset?.getTime()).toBeLessThan(ONSET + 20_000);
    expect(first.count).toBe(lines.filter((item) => item.line.startsWith("ERROR")).length);
    expect(first.example).toMatch(/^ERROR connection refused to 10\.0\.3\.[78]:5432 \(pool checkout-db\)$/);
    expect(shortAnswer(first, time)).toBe(
      `Error logs: "ERROR connection refused to <ip>:<num> (pool checkout-db)" ${first.count} lines, not seen in the hour before, since 14:05 UTC — e.g. "${first.example}"`,
    );
  });

  it("finds a pattern that grew, and dates it where it grew", () => {
    const lines = serviceLog(2, (at, next) =>
      at >= ONSET && next() < 12 / 60 ? `WARN retrying call to inventory (attempt 2) after ${Math.round(next() * 900)}ms` : undefined,
    );
    const [first, ...rest] = analyzeLogs({ lines, totals: perMinute(lines) }, context) as LogPatternEvidence[];
    expect(rest).toEqual([]);
    expect(first).toMatchObject({ pattern: "WARN retrying call to inventory (attempt <num>) after <duration>", abnormal: true });
    expect(first?.ratio).toBeGreaterThan(5);
    expect(first?.ratio).toBeLessThan(30);
    expect(Math.abs((first?.onset?.getTime() ?? 0) - ONSET)).toBeLessThanOrEqual(60_000);
    expect(shortAnswer(first as LogPatternEvidence, time)).toMatch(
      /^Error logs: "WARN retrying call to inventory \(attempt <num>\) after <duration>" \d+ lines \([\d.]+ lines\/min\), [\d.]+× its rate in the hour before \([\d.]+ lines\/min\), since 14:0[45] UTC — e\.g\. "WARN retrying/,
    );
  });

  it("reads a pattern that began a couple of minutes before the incident phase as new, its baseline measured before it began", () => {
    // The incident phase starts at 14:03; a deploy's new error begins at 14:01, so its first lines fall before it.
    const early = Date.parse("2026-11-20T14:01:00Z");
    const lines = serviceLog(9, (at, next) =>
      at >= early && next() < 20 / 60 ? `ERROR NullPointerException in PaymentCapture.amount (order ${Math.floor(next() * 1e6)})` : undefined,
    );
    const [first, ...rest] = analyzeLogs({ lines, totals: perMinute(lines) }, context) as LogPatternEvidence[];
    expect(rest).toEqual([]);
    expect(first).toMatchObject({
      pattern: "ERROR NullPointerException in PaymentCapture.amount (order <num>)",
      abnormal: true,
      baselinePerMinute: 0,
      ratio: Infinity,
    });
    expect(Math.abs((first?.onset?.getTime() ?? 0) - early)).toBeLessThan(20_000);
    expect(shortAnswer(first as LogPatternEvidence, time)).toMatch(
      /^Error logs: "ERROR NullPointerException[^"]*" \d+ lines, not seen in the hour before, since 14:01 UTC/,
    );

    // A pattern that was there all along and grew from 14:01 is compared with its rate before it grew.
    const grown = serviceLog(10, (at, next) =>
      at >= early && next() < 10 / 60 ? `WARN retrying call to inventory (attempt 2) after ${Math.round(next() * 900)}ms` : undefined,
    );
    const [retries] = analyzeLogs({ lines: grown, totals: perMinute(grown) }, context) as LogPatternEvidence[];
    const before = grown.filter((item) => item.line.startsWith("WARN retrying") && item.at.getTime() < (retries?.onset?.getTime() ?? 0)).length;
    expect(retries?.baselinePerMinute).toBeCloseTo(before / (((retries?.onset?.getTime() ?? 0) - window.start.getTime()) / 60_000), 6);

    // One that began long before the incident phase keeps its whole baseline: it is no news at the issue time.
    const old = Date.parse("2026-11-20T13:40:00Z");
    const steady = serviceLog(11, (at, next) =>
      at >= old && next() < 20 / 60 ? `ERROR NullPointerException in PaymentCapture.amount (order ${Math.floor(next() * 1e6)})` : undefined,
    );
    expect(analyzeLogs({ lines: steady, totals: perMinute(steady) }, context)).toMatchObject([{ total: true, abnormal: false }]);
  });

  it("reports a healthy noisy log as one normal total, naming its most common pattern", () => {
    const lines = serviceLog(3);
    const found = analyzeLogs({ lines, totals: perMinute(lines) }, context);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({
      kind: "log-pattern",
      total: true,
      abnormal: false,
      count: lines.filter((item) => item.at >= incidentPhaseStart(window)).length,
    });
    expect((found[0] as LogPatternEvidence).pattern).toBe("<time> INFO pod=<id> GET <*> status=<num> duration=<duration> <*>");
    expect(shortAnswer(found[0] as LogPatternEvidence, time)).toMatch(
      /^Error logs: [\d.k]+ lines \([\d.]+ lines\/min\), within normal variation of its rate in the hour before \([\d.]+ lines\/min\); most common: "<time> INFO/,
    );
  });

  it("names no most common pattern when the incident phase has no line: the baseline's says nothing of it", () => {
    const lines = serviceLog(12).filter((item) => item.at < incidentPhaseStart(window));
    const [all, ...rest] = analyzeLogs({ lines, totals: perMinute(lines) }, context) as LogPatternEvidence[];
    expect(rest).toEqual([]);
    expect(all).toMatchObject({ kind: "log-pattern", total: true, pattern: "", count: 0, perMinute: 0 });
    expect(all).not.toHaveProperty("example");
    expect(shortAnswer(all as LogPatternEvidence, time)).toMatch(/^Error logs: 0 lines \(0 lines\/min\), [^;"]*$/);
  });

  it("does not take a handful of new lines in a noisy log for a cause", () => {
    // Six lines of a new warning, one every two minutes from the onset: new, but chance.
    const lines = serviceLog(4, (at) =>
      at >= ONSET && (at - ONSET) % 120_000 === 0 && at < ONSET + 720_000 ? "WARN slow query on replica-2 took 1200ms" : undefined,
    );
    expect(lines.filter((item) => item.line.includes("slow query"))).toHaveLength(6);
    const found = analyzeLogs({ lines, totals: perMinute(lines) }, context);
    // Nor for the usual: a new pattern with too few lines to judge says so (it read as within the usual range).
    expect(found).toMatchObject([{ kind: "no-data", reason: "too-few", pattern: "WARN slow query on <id> took <duration>", count: 6 }]);
  });

  it("reads a sample scaled to the totals, and still dates the onset", () => {
    const lines = serviceLog(5, (at, next) =>
      at >= ONSET && next() < 0.5 ? `ERROR upstream payment answered 503 in ${Math.round(next() * 50)}ms` : undefined,
    );
    const all = lines.filter((item) => item.line.startsWith("ERROR")).length;
    const found = analyzeLogs({ lines: sampled(lines, 300), totals: perMinute(lines) }, context) as LogPatternEvidence[];
    expect(found[0]).toMatchObject({ pattern: "ERROR upstream payment answered <num> in <duration>", abnormal: true, ratio: Infinity });
    // Estimated from a sample of the incident phase: close to, not exactly, the real count.
    expect(found[0]?.count).toBeGreaterThan(all * 0.7);
    expect(found[0]?.count).toBeLessThan(all * 1.3);
    // The sample of the incident phase is its latest 300 lines, from about 14:18: the rise began before
    // them, and is dated by the counts of every line, which are complete.
    expect(Math.abs((found[0]?.onset?.getTime() ?? 0) - ONSET)).toBeLessThanOrEqual(60_000);
  });

  it("judges every line together when they rise without a pattern of their own", () => {
    // Lines that are each unique (no shared shape) tripling from the onset: no pattern grew, the total did.
    const words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima"];
    const next = random(6);
    const lines: LogLine[] = [];
    for (let at = window.start.getTime(); at <= window.end.getTime(); at += 1000) {
      const rate = at >= ONSET ? 60 / 60 : 5 / 60;
      if (next() < rate)
        lines.push({ at: new Date(at), line: Array.from({ length: 2 + Math.floor(next() * 8) }, () => words[Math.floor(next() * words.length)]).join(" ") });
    }
    const found = analyzeLogs({ lines, totals: perMinute(lines) }, context);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ total: true, abnormal: true });
    expect(Math.abs(((found[0] as LogPatternEvidence).onset?.getTime() ?? 0) - ONSET)).toBeLessThanOrEqual(60_000);
    expect(shortAnswer(found[0] as LogPatternEvidence, time)).toMatch(
      /^Error logs: [\d.k]+ lines \([\d.]+ lines\/min\), [\d.]+× its rate in the hour before \([\d.]+ lines\/min\), since 14:0[45] UTC; most common: "/,
    );
  });

  it("lists at most five abnormal patterns, strongest first", () => {
    const lines = serviceLog(7, (at, next) => {
      if (at < ONSET) return undefined;
      const messages = [
        "ERROR payment declined by gateway",
        "ERROR inventory lookup failed: no such item",
        "ERROR could not serialize cart for session",
        "ERROR shipping quote unavailable for region",
        "ERROR coupon service returned malformed body",
        "ERROR tax calculation exceeded its budget and was skipped",
        "ERROR fraud check queue is full",
      ];
      const kind = Math.floor(next() * 40);
      return messages[kind];
    });
    const found = analyzeLogs({ lines, totals: perMinute(lines) }, context) as LogPatternEvidence[];
    expect(found).toHaveLength(5);
    expect(found.every((item) => item.abnormal)).toBe(true);
    const severities = found.map((item) => item.severity);
    expect(severities).toEqual([...severities].sort((a, b) => b - a));
  });

  it("gives the same evidence whatever the order of the lines", () => {
    const lines = serviceLog(8, (at, next) => (at >= ONSET && next() < 0.3 ? `ERROR timeout talking to 10.0.0.${Math.floor(next() * 9)}` : undefined));
    const shuffled = [...lines].sort((a, b) => (a.line < b.line ? -1 : 1));
    expect(analyzeLogs({ lines: shuffled, totals: perMinute(lines) }, context)).toEqual(analyzeLogs({ lines, totals: perMinute(lines) }, context));
  });

  it("says so when no line matched in the window", () => {
    expect(analyzeLogs({ lines: [], totals: [{ at: window.start, count: 0 }] }, context)).toEqual([
      { kind: "none", action: "Error logs", link: "https://grafana.example/explore", what: "matching log lines" },
    ]);
    // Lines outside the window do not count.
    expect(analyzeLogs({ lines: [{ at: new Date(window.end.getTime() + 1000), line: "late" }] }, { action: "Error logs", window })).toEqual([
      { kind: "none", action: "Error logs", what: "matching log lines" },
    ]);
  });

  it("reads a new error stream with nothing before it as new, from its first line", () => {
    const lines: LogLine[] = [];
    for (let at = ONSET + 7_000; at <= window.end.getTime(); at += 10_000)
      lines.push({ at: new Date(at), line: `panic: runtime error: index out of range [${at % 7}]` });
    const found = analyzeLogs({ lines }, context);
    expect(found).toMatchObject([
      { pattern: "panic: runtime error: index out of range [<num>]", abnormal: true, ratio: Infinity, onset: new Date(ONSET + 7_000), count: lines.length },
    ]);
  });

  it("cuts a long example line", () => {
    const lines: LogLine[] = [];
    for (let at = ONSET; at <= window.end.getTime(); at += 10_000) lines.push({ at: new Date(at), line: `ERROR ${"x".repeat(500)}` });
    const [first] = analyzeLogs({ lines }, context) as LogPatternEvidence[];
    expect(first?.example).toHaveLength(200);
    expect(first?.example?.endsWith("…")).toBe(true);
  });
});
