import { INCIDENT_LEAD_MS, incidentPhaseStart, type TimeWindow } from "@pes/contracts";
import type { Evidence, Labels, LogPatternEvidence, NoDataEvidence, NoneEvidence } from "./evidence.js";
import { createTemplateMiner } from "./log-templates.js";
import { compareText, oneLine } from "./plain-text.js";

export { incidentPhaseStart } from "@pes/contracts";

/** A pattern needs at least this many lines in the incident phase to be abnormal: a handful is chance. */
export const MIN_ABNORMAL_LINES = 10;
/** …and at least this share of the incident phase's lines: in a noisy stream, rare lines come and go. */
export const MIN_ABNORMAL_SHARE = 0.005;
/** …and at least this many times the lines its baseline rate (plus one line) would give the incident phase. */
export const ABNORMAL_LOG_GROWTH = 3;
/**
 * A pattern whose rise began at most this long before the incident phase (a deploy's first failing
 * requests, minutes before the alert) has its baseline measured before that rise, as a metric's usual
 * level is measured before its change began: its first lines are the incident's, not its past.
 */
export const EARLY_RISE_MS = INCIDENT_LEAD_MS;
/** Patterns reported at most, strongest first. */
export const MAX_LOG_PATTERNS = 5;
/** An example line is cut to this many characters. */
const MAX_EXAMPLE_CHARS = 200;
/** Onsets are found on buckets of at least a minute, and at most this many over the window. */
const MAX_BUCKETS = 500;
const MINUTE = 60_000;

/** One log line as a source gave it. */
export interface LogLine {
  at: Date;
  line: string;
  /** The labels of the stream it came from, when the source has streams. */
  labels?: Labels;
}

/** How many lines matched in one step of the window: the step that starts at `at`. */
export interface LogCount {
  at: Date;
  count: number;
}

export interface LogInput {
  /**
   * The lines read, in any order. A source that reads at most N lines of a phase should read the latest
   * N of it (newest first, as Loki's `direction=backward` and a search sorted by time descending do): the
   * lines are then every line from the earliest one read to the end of that phase.
   */
  lines: Iterable<LogLine>;
  /** Matching lines per step over the window; when they count more lines than were read, the lines are a sample. */
  totals?: Iterable<LogCount>;
}

export interface LogContext {
  /** The action's title: the evidence cites it. */
  action: string;
  window: TimeWindow;
  /** The action's most important link, carried into the evidence. */
  link?: string;
}

interface Phase {
  from: number;
  to: number;
  /** Lines read in the phase. */
  read: number;
  /** Lines the phase holds (the totals, or the lines read when there are no totals or they count fewer). */
  total: number;
  /** From when the lines read are every line of the phase (its start, unless they are a sample). */
  coveredFrom: number;
}

interface Pattern {
  id: number;
  /** The labels all its lines' streams share (undefined until its first line). */
  labels?: Labels;
  /** Its lines' times, one count each, in time order. */
  lines: LogCount[];
  baseline: number;
  incident: number;
  example?: LogLine;
}

interface Judged {
  pattern: string;
  /** Estimated lines in each phase. */
  baseline: number;
  incident: number;
  /** How long its baseline lasted: the baseline phase, or up to a rise that began shortly before the incident phase. */
  baselineMinutes: number;
  /** When its rise began, when it is abnormal and the data dates it. */
  onset?: Date;
  example?: LogLine;
  abnormal: boolean;
  severity: number;
  /** New (none in its baseline) and a share of the lines, but with fewer than MIN_ABNORMAL_LINES: too few to judge. */
  tooFew?: boolean;
  labels?: Labels;
  /** Every matching line together, not one pattern. */
  total?: boolean;
}

/**
 * Compares the log lines of the incident phase with those before it, pattern by pattern.
 *
 * - phases: the baseline is [start, time − 5 min), the incident phase from then to the end of the window
 *   (or to the latest line or count seen, when the window reaches past what the source has yet);
 * - lines are grouped into patterns (`log-templates.ts`: masked times, numbers, ids, UUIDs, hex, IPs,
 *   durations, quoted strings, emails; Drain-style merging); when the totals say that a phase holds more
 *   lines than were read, each pattern's count in that phase is scaled by total ÷ read;
 * - a pattern is abnormal when, in the incident phase, it has at least MIN_ABNORMAL_LINES lines, at least
 *   MIN_ABNORMAL_SHARE of the phase's lines, and at least ABNORMAL_LOG_GROWTH times what its baseline rate
 *   plus one line would give (one line added: a pattern not seen before is not one that could not occur;
 *   this also makes a new pattern with few lines against a long baseline need more than a short one). Its
 *   severity is that multiple; its onset the start of its largest rise (a CUSUM change point over buckets
 *   of a minute or more), dated to its first line from then on; when that rise began in the baseline at
 *   most EARLY_RISE_MS before the incident phase, its baseline ends where the rise began (a new error's
 *   first lines, logged a couple of minutes before the incident phase, do not make it "28× its rate");
 * - the same rule, on every line, judges the total.
 *
 * Returns the abnormal patterns, strongest first (at most MAX_LOG_PATTERNS), each with an example line
 * from the incident phase and its count; when there is none, one evidence for all lines (`total`), abnormal
 * when they grew together; no line and no count in the window: `none` "matching log lines".
 * Deterministic: lines are grouped in time order (then text order), ties broken by pattern text.
 */
export function analyzeLogs(input: LogInput, context: LogContext): Evidence[] {
  const { window, action, link } = context;
  const cited = { action, ...(link === undefined ? {} : { link }) };
  const start = window.start.getTime();
  const incidentFrom = incidentPhaseStart(window).getTime();
  const lines = [...input.lines]
    .filter((item) => item.at.getTime() >= start && item.at.getTime() <= window.end.getTime())
    .sort((a, b) => a.at.getTime() - b.at.getTime() || compareText(a.line, b.line));
  const totals = input.totals === undefined ? undefined : [...input.totals].filter((item) => Number.isFinite(item.count) && item.count >= 0);
  const counted = totals?.reduce((sum, item) => sum + item.count, 0) ?? 0;
  if (lines.length === 0 && counted === 0) return [{ kind: "none", ...cited, what: "matching log lines" } satisfies NoneEvidence];

  let latestSeen = lines.at(-1)?.at.getTime() ?? -Infinity;
  for (const item of totals ?? []) if (item.count > 0) latestSeen = Math.max(latestSeen, item.at.getTime());
  const end = Math.min(window.end.getTime(), Math.max(window.time.getTime(), latestSeen));
  const baseline = phaseOf(start, incidentFrom, false, lines, totals);
  const incident = phaseOf(incidentFrom, end, true, lines, totals);

  const miner = createTemplateMiner();
  const patterns = new Map<number, Pattern>();
  for (const item of lines) {
    const id = miner.add(item.line);
    let pattern = patterns.get(id);
    if (pattern === undefined) {
      pattern = { id, lines: [], baseline: 0, incident: 0 };
      patterns.set(id, pattern);
    }
    const at = item.at.getTime();
    pattern.labels = shared(pattern.labels, item.labels ?? {});
    pattern.lines.push({ at: item.at, count: 1 });
    if (at < incidentFrom) pattern.baseline += 1;
    else {
      pattern.incident += 1;
      pattern.example ??= item;
    }
  }

  const buckets = bucketing(window, baseline, incident);
  const totalPoints = totals === undefined ? lines.map((item) => ({ at: item.at, count: 1 })) : [...totals].sort((a, b) => a.at.getTime() - b.at.getTime());
  // Every line's rise, from the counts (never a sample): dates a pattern's rise that began where its lines were not read.
  const totalOnset = onsetOf(totalPoints, { ...buckets, covered: buckets.covered.map(() => true) })?.at;

  const judge = (baselineLines: number, incidentLines: number, baselineMinutes: number) => {
    const expected = ((baselineLines + 1) * minutes(incident)) / Math.max(baselineMinutes, 1 / 60);
    const severity = incidentLines / expected;
    const share = incidentLines >= MIN_ABNORMAL_SHARE * incident.total;
    const abnormal = incidentLines >= MIN_ABNORMAL_LINES && share && severity >= ABNORMAL_LOG_GROWTH;
    // New (none before), a share of the lines, but fewer than MIN_ABNORMAL_LINES: neither abnormal nor usual.
    const tooFew = baselineLines === 0 && incidentLines > 0 && incidentLines < MIN_ABNORMAL_LINES && share;
    return { severity, abnormal, ...(tooFew ? { tooFew } : {}) };
  };
  const earliestEarlyRise = Math.max(start, incidentFrom - EARLY_RISE_MS);
  const judged: Judged[] = [...patterns.values()].map((pattern) => {
    const onset = datedOnset(onsetOf(pattern.lines, buckets), totalOnset);
    const early = onset !== undefined && onset.getTime() > earliestEarlyRise && onset.getTime() < incidentFrom ? onset.getTime() : undefined;
    const baselineRead = early === undefined ? pattern.baseline : pattern.lines.filter((item) => item.at.getTime() < early).length;
    const baselineMinutes = early === undefined ? minutes(baseline) : (early - start) / MINUTE;
    const baselineLines = scaled(baselineRead, baseline);
    const incidentLines = scaled(pattern.incident, incident);
    const verdict = judge(baselineLines, incidentLines, baselineMinutes);
    return {
      pattern: miner.template(pattern.id),
      ...(pattern.labels === undefined ? {} : { labels: pattern.labels }),
      baseline: baselineLines,
      incident: incidentLines,
      baselineMinutes,
      ...(pattern.example === undefined ? {} : { example: pattern.example }),
      ...verdict,
      ...(verdict.abnormal && onset !== undefined ? { onset } : {}),
    };
  });
  judged.sort((a, b) => b.severity - a.severity || b.incident - a.incident || compareText(a.pattern, b.pattern));

  // A pattern's labels less those every line shares: what sets its streams apart from the others read.
  const everyLine = lines.reduce<Labels | undefined>((labels, item) => shared(labels, item.labels ?? {}), undefined) ?? {};
  const apart = (labels: Labels | undefined): Labels | undefined => {
    const own = Object.entries(labels ?? {}).filter(([name, value]) => everyLine[name] !== value);
    return own.length === 0 ? undefined : Object.fromEntries(own);
  };
  const evidenceOf = (item: Judged): LogPatternEvidence => {
    const perMinute = item.incident / minutes(incident);
    const baselinePerMinute = item.baseline / Math.max(item.baselineMinutes, 1 / 60);
    const { onset } = item;
    return {
      kind: "log-pattern",
      ...cited,
      pattern: item.pattern,
      perMinute,
      baselinePerMinute,
      ratio: baselinePerMinute === 0 ? (perMinute === 0 ? 1 : Infinity) : perMinute / baselinePerMinute,
      severity: item.severity,
      abnormal: item.abnormal,
      ...(onset === undefined ? {} : { onset }),
      baselineMs: window.time.getTime() - start,
      ...(item.example === undefined ? {} : { example: cut(item.example.line) }),
      ...(apart(item.labels) === undefined ? {} : { labels: apart(item.labels) as Labels }),
      count: Math.round(item.incident),
      ...(item.total === true ? { total: true } : {}),
    };
  };

  const abnormal = judged.filter((item) => item.abnormal).slice(0, MAX_LOG_PATTERNS);
  if (abnormal.length > 0) return abnormal.map(evidenceOf);
  // A new pattern (none of it before) that only lacks lines to be abnormal cannot be told from chance, nor
  // from a fault that has just begun: too few to judge, not "within the usual range".
  // Of several, the one with most lines: the likeliest to be more than a one-off.
  const tooFew = judged.filter((item) => item.tooFew === true).sort((a, b) => b.incident - a.incident)[0];
  if (tooFew !== undefined) {
    return [{ kind: "no-data", ...cited, reason: "too-few", pattern: tooFew.pattern, count: Math.round(tooFew.incident) } satisfies NoDataEvidence];
  }

  // Nothing grew on its own: every line, named by the pattern most common in the incident phase; with no
  // line read there, by none (the baseline's most common says nothing of the incident).
  const common = judged
    .filter((item) => item.incident > 0)
    .sort((a, b) => b.incident - a.incident || b.baseline - a.baseline || compareText(a.pattern, b.pattern))[0];
  const verdict = judge(baseline.total, incident.total, minutes(baseline));
  const onset = verdict.abnormal ? datedOnset(onsetOf(totalPoints, buckets), totalOnset) : undefined;
  const all: Judged = {
    pattern: common?.pattern ?? "",
    baseline: baseline.total,
    incident: incident.total,
    baselineMinutes: minutes(baseline),
    ...(common?.example === undefined ? {} : { example: common.example }),
    ...verdict,
    ...(onset === undefined ? {} : { onset }),
    total: true,
  };
  return [evidenceOf(all)];
}

/** The labels two label sets share (name and value). */
function shared(a: Labels | undefined, b: Labels): Labels {
  if (a === undefined) return b;
  return Object.fromEntries(Object.entries(a).filter(([name, value]) => b[name] === value));
}

/** A phase [from, to) (or [from, to] when `closed`: the window's end is in it) and what was read of it. */
function phaseOf(from: number, to: number, closed: boolean, lines: readonly LogLine[], totals: readonly LogCount[] | undefined): Phase {
  const within = (at: Date) => at.getTime() >= from && (closed ? at.getTime() <= to : at.getTime() < to);
  const inPhase = lines.filter((item) => within(item.at));
  const read = inPhase.length;
  const counted = totals?.filter((item) => within(item.at)).reduce((sum, item) => sum + item.count, 0) ?? 0;
  const total = Math.max(read, counted);
  const earliest = inPhase[0]?.at.getTime();
  return { from, to, read, total, coveredFrom: total > read && earliest !== undefined ? earliest : from };
}

/** A pattern's lines read in a phase, as an estimate of its lines in the whole phase. */
function scaled(read: number, phase: Phase): number {
  return phase.read === 0 ? 0 : (read * phase.total) / phase.read;
}

function minutes(phase: Phase): number {
  return Math.max(phase.to - phase.from, 1000) / MINUTE;
}

interface Buckets {
  size: number;
  from: number;
  /** The first bucket of the incident phase. */
  split: number;
  /** For each bucket: whether every line of it was read (outside a sample's gap). */
  covered: boolean[];
}

function bucketing(window: TimeWindow, baseline: Phase, incident: Phase): Buckets {
  const from = window.start.getTime();
  const span = Math.max(incident.to - from, MINUTE);
  const size = Math.max(MINUTE, Math.ceil(span / MAX_BUCKETS / 1000) * 1000);
  const covered: boolean[] = [];
  for (let at = from; at < incident.to; at += size) {
    const phase = at < baseline.to ? baseline : incident;
    covered.push(at + size > phase.coveredFrom);
  }
  return { size, from, split: Math.floor((baseline.to - from) / size), covered };
}

/** When a rise began; `gapFrom` when lines before it were not read (a sample), so it may have begun from then on. */
interface Onset {
  at: Date;
  gapFrom?: Date;
}

/**
 * When a rise began: over the covered buckets, the cumulative sum of (lines − reference), with the
 * reference halfway between the rate before and during the incident phase, falls while the rate is low
 * and climbs while it is high; the rise starts after the lowest point before the largest climb (a CUSUM
 * change point). Dated to the first line (or count) from that bucket on. `points` are in time order.
 */
function onsetOf(points: readonly LogCount[], buckets: Buckets): Onset | undefined {
  const counts = buckets.covered.map(() => 0);
  for (const point of points) {
    const index = Math.floor((point.at.getTime() - buckets.from) / buckets.size);
    if (index >= 0 && index < counts.length) counts[index] = (counts[index] ?? 0) + point.count;
  }
  const indexes = counts.flatMap((_count, index) => (buckets.covered[index] === true ? [index] : []));
  const mean = (part: readonly number[]) => (part.length === 0 ? 0 : part.reduce((sum, index) => sum + (counts[index] ?? 0), 0) / part.length);
  const reference = (mean(indexes.filter((index) => index < buckets.split)) + mean(indexes.filter((index) => index >= buckets.split))) / 2;
  let sum = 0;
  let lowest = 0;
  let lowestAfter = indexes[0];
  let bestClimb = 0;
  let bestStart: number | undefined;
  for (const [position, index] of indexes.entries()) {
    sum += (counts[index] ?? 0) - reference;
    if (sum - lowest > bestClimb) {
      bestClimb = sum - lowest;
      bestStart = lowestAfter;
    }
    if (sum < lowest) {
      lowest = sum;
      lowestAfter = indexes[position + 1];
    }
  }
  if (bestStart === undefined) return undefined;
  const from = buckets.from + bestStart * buckets.size;
  const at = points.find((point) => point.at.getTime() >= from && point.count > 0)?.at;
  if (at === undefined) return undefined;
  // A rise that starts right after lines that were not read began somewhere in that gap.
  let gap = bestStart;
  while (gap > 0 && buckets.covered[gap - 1] === false) gap -= 1;
  return gap === bestStart ? { at } : { at, gapFrom: new Date(buckets.from + gap * buckets.size) };
}

/**
 * A pattern's onset: its own, unless its rise starts right after lines that were not read; then the rise
 * of every line when that falls in the gap, else none (it began somewhere in the gap, which is not a time).
 */
function datedOnset(onset: Onset | undefined, total: Date | undefined): Date | undefined {
  if (onset?.gapFrom === undefined) return onset?.at;
  if (total !== undefined && total >= onset.gapFrom && total <= onset.at) return total;
  return undefined;
}

function cut(line: string): string {
  return oneLine(line, MAX_EXAMPLE_CHARS);
}
