import type { ActionOutcome, TimeWindow } from "../connector.js";
import { formatClock, formatPeriodBefore, formatRange, formatRatio, formatValue } from "../human-format.js";
import type { PrometheusMatrixSeries, PrometheusQueryData, PrometheusSample, PrometheusVectorSample } from "./prometheus-response.js";

/** A value this many times its baseline (or this fraction of it, inverted) is abnormal. */
export const ABNORMAL_RATIO = 2;
/** The incident phase starts this long before the issue time: alerts fire after the change began. */
export const INCIDENT_LEAD_MS = 5 * 60_000;
const MAX_LISTED_VALUES = 5;

export interface AnalysisContext {
  /** The action's title; short answers start with it ("p99 latency 1.8 s, …"). */
  title: string;
  unit?: string;
  window: TimeWindow;
}

/** What the data says, without the link (the connector adds that). */
export type Analysis = Omit<ActionOutcome, "mostImportantLink">;

interface Point {
  at: number;
  value: number;
}

interface SeriesFinding {
  labels: Readonly<Record<string, string>>;
  /** Canonical label text: ties are broken by it so that the same data always reads the same. */
  key: string;
  baseline: number;
  low: number;
  high: number;
  extreme: Point;
  ratio: number;
  deviation: number;
  since?: Date;
}

/** Analyzes any query answer: a matrix against its baseline, instant values as they are. */
export function analyzeQueryData(data: PrometheusQueryData, context: AnalysisContext): Analysis {
  switch (data.resultType) {
    case "matrix":
      return analyzeMatrix(data.result, context);
    case "vector":
      return analyzeVector(data.result, context);
    case "scalar":
      return { status: "normal", shortAnswer: `${context.title} ${formatValue(toNumber(data.result[1]), context.unit)}` };
    case "string":
      return { status: "normal", shortAnswer: `${context.title}: ${data.result[1]}` };
  }
}

/**
 * Compares each series' incident phase with its baseline and reports the most abnormal one.
 *
 * - baseline: the median of the series in [start, time − 5 min) (robust to a spike or two);
 * - incident: the extreme in [time − 5 min, end]: the maximum if it rose, the minimum if it fell,
 *   whichever is further from the baseline;
 * - abnormal when incident/baseline ≥ 2 or ≤ 0.5 (a baseline of 0 with any other value counts too);
 * - since: the first departing sample from the incident phase on, extended back over the unbroken run of
 *   departing samples it belongs to (a change that began before time − 5 min is dated when it began).
 * NaN and ±Inf samples are ignored; a series with nothing to compare is left out.
 */
export function analyzeMatrix(series: Iterable<PrometheusMatrixSeries>, context: AnalysisContext): Analysis {
  const { window, title, unit } = context;
  const period = formatPeriodBefore(window.time.getTime() - window.start.getTime());
  const lead = Math.min(INCIDENT_LEAD_MS, (window.time.getTime() - window.start.getTime()) / 2);
  const incidentFrom = window.time.getTime() - lead;
  const start = window.start.getTime();
  const end = window.end.getTime();

  const findings: SeriesFinding[] = [];
  const withoutBaseline: Array<{ key: string; labels: Readonly<Record<string, string>>; latest: Point }> = [];
  let lastSeen: Point | undefined;
  for (const item of series) {
    const points = item.values
      .map(([seconds, value]): Point => ({ at: seconds * 1000, value: toNumber(value) }))
      .filter((point) => Number.isFinite(point.value) && point.at >= start && point.at <= end)
      .sort((a, b) => a.at - b.at);
    const before = points.filter((point) => point.at < incidentFrom);
    const during = points.filter((point) => point.at >= incidentFrom);
    const latest = points[points.length - 1];
    if (latest !== undefined && (lastSeen === undefined || latest.at > lastSeen.at)) lastSeen = latest;
    const key = labelKey(item.metric);
    if (during.length === 0) continue;
    if (before.length === 0) {
      const last = during[during.length - 1];
      if (last !== undefined) withoutBaseline.push({ key, labels: item.metric, latest: last });
      continue;
    }
    findings.push(compare(item.metric, key, points, before, during, incidentFrom));
  }

  if (findings.length === 0) {
    const sorted = withoutBaseline.sort((a, b) => b.latest.value - a.latest.value || compareText(a.key, b.key));
    const first = sorted[0];
    if (first !== undefined) {
      return {
        status: "normal",
        shortAnswer: `${title} ${formatValue(first.latest.value, unit)}, no data in ${period} to compare with`,
      };
    }
    if (lastSeen !== undefined) {
      return { status: "normal", shortAnswer: `${title}: no data after ${formatClock(new Date(lastSeen.at), window.time)}` };
    }
    return { status: "normal", shortAnswer: `${title}: no data in the window` };
  }

  findings.sort((a, b) => b.deviation - a.deviation || compareText(a.key, b.key));
  const worst = findings[0] as SeriesFinding;
  const names = distinguishingNames(findings.map((finding) => finding.labels));
  const which = (label: string) => (findings.length > 1 ? `; ${label} of ${findings.length} series: ${names(worst.labels)}` : "");
  const value = formatValue(worst.extreme.value, unit);

  if (worst.deviation >= ABNORMAL_RATIO) {
    const change =
      worst.ratio > 0 && Number.isFinite(worst.ratio)
        ? `${formatRatio(worst.ratio)}× its level in ${period} (${formatValue(worst.baseline, unit)})`
        : `${worst.extreme.value > worst.baseline ? "up" : "down"} from ${formatValue(worst.baseline, unit)} in ${period}`;
    const since = worst.since === undefined ? "" : `, since ${formatClock(worst.since, window.time)}`;
    return {
      status: "abnormal",
      shortAnswer: `${title} ${value}, ${change}${since}${which("worst")}`,
      severity: worst.deviation,
      ratio: worst.ratio,
      ...(worst.since === undefined ? {} : { since: worst.since }),
    };
  }
  // A relative tolerance absorbs float noise (rate() of steady counters wobbles in the 15th digit).
  const slack = 1e-6 * Math.max(Math.abs(worst.low), Math.abs(worst.high));
  const inRange = worst.extreme.value >= worst.low - slack && worst.extreme.value <= worst.high + slack;
  // "×" is kept for abnormal answers; a normal move reads as a percentage.
  const percent = Math.round(Math.abs(worst.ratio - 1) * 100);
  const baselineText = formatValue(worst.baseline, unit);
  const usual = inRange
    ? `within its usual range (${formatRange(worst.low, worst.high, unit)} over ${period})`
    : percent === 0
      ? `close to its level in ${period} (${baselineText})`
      : `${percent}% ${worst.ratio > 1 ? "above" : "below"} its level in ${period} (${baselineText}), within normal variation`;
  return { status: "normal", shortAnswer: `${title} ${value}, ${usual}${which("most changed")}`, ratio: worst.ratio };
}

/** Reports instant values, highest first; an instant has no baseline, so it is never abnormal. */
export function analyzeVector(samples: readonly PrometheusVectorSample[], context: AnalysisContext): Analysis {
  const { title, unit, window } = context;
  const values = samples
    .filter((sample): sample is PrometheusVectorSample & { value: PrometheusSample } => sample.value !== undefined)
    .map((sample) => ({ labels: sample.metric, key: labelKey(sample.metric), value: toNumber(sample.value[1]) }))
    .sort((a, b) => compareValues(b.value, a.value) || compareText(a.key, b.key));
  const first = values[0];
  if (first === undefined) return { status: "normal", shortAnswer: `${title}: no data at ${formatClock(window.time, window.time)}` };
  if (values.length === 1) return { status: "normal", shortAnswer: `${title} ${formatValue(first.value, unit)}` };
  const names = distinguishingNames(values.map((item) => item.labels));
  const listed = values.slice(0, MAX_LISTED_VALUES).map((item) => `${formatValue(item.value, unit)} (${names(item.labels)})`);
  const more = values.length > MAX_LISTED_VALUES ? `, and ${values.length - MAX_LISTED_VALUES} more` : "";
  return { status: "normal", shortAnswer: `${title}: ${listed.join(", ")}${more}` };
}

function compare(
  labels: Readonly<Record<string, string>>,
  key: string,
  points: readonly Point[],
  before: readonly Point[],
  during: readonly Point[],
  incidentFrom: number,
): SeriesFinding {
  const sortedBefore = before.map((point) => point.value).sort((a, b) => a - b);
  const baseline = median(sortedBefore);
  let highest = during[0] as Point;
  let lowest = during[0] as Point;
  for (const point of during) {
    if (point.value > highest.value) highest = point;
    if (point.value < lowest.value) lowest = point;
  }
  const rise = ratioOf(highest.value, baseline);
  const fall = ratioOf(lowest.value, baseline);
  const rose = deviationOf(rise) >= deviationOf(fall);
  const extreme = rose ? highest : lowest;
  const ratio = rose ? rise : fall;
  const deviation = deviationOf(ratio);
  const finding: SeriesFinding = {
    labels,
    key,
    baseline,
    low: sortedBefore[0] ?? baseline,
    high: sortedBefore[sortedBefore.length - 1] ?? baseline,
    extreme,
    ratio,
    deviation,
  };
  if (deviation < ABNORMAL_RATIO) return finding;

  const departs = (point: Point) =>
    deviationOf(ratioOf(point.value, baseline)) >= ABNORMAL_RATIO &&
    Math.sign(point.value - baseline) === Math.sign(extreme.value - baseline);
  let index = points.findIndex((point) => point.at >= incidentFrom && departs(point));
  while (index > 0 && departs(points[index - 1] as Point)) index -= 1;
  const first = points[index];
  return first === undefined ? finding : { ...finding, since: new Date(first.at) };
}

/** value / baseline, with a zero baseline read as "from nothing": 1 if still 0, else ±Infinity. */
function ratioOf(value: number, baseline: number): number {
  if (baseline === 0) return value === 0 ? 1 : value > 0 ? Infinity : -Infinity;
  return value / baseline;
}

/** How far a ratio is from 1 either way (4 for both 4× and 0.25×); a sign change or a fall to 0 is infinite. */
function deviationOf(ratio: number): number {
  return ratio > 0 ? Math.max(ratio, 1 / ratio) : Infinity;
}

function median(sorted: readonly number[]): number {
  const middle = Math.floor(sorted.length / 2);
  if (sorted.length % 2 === 1) return sorted[middle] ?? Number.NaN;
  return ((sorted[middle - 1] ?? Number.NaN) + (sorted[middle] ?? Number.NaN)) / 2;
}

function toNumber(text: string): number {
  // Prometheus writes "+Inf", "-Inf" and "NaN"; Number() reads all three.
  return Number(text);
}

function labelKey(labels: Readonly<Record<string, string>>): string {
  return Object.keys(labels)
    .sort(compareText)
    .map((name) => `${name}=${labels[name] ?? ""}`)
    .join(", ");
}

/**
 * Names each series by the labels whose values differ between the series (a missing label counts as
 * different), e.g. `service=checkout`, so the name says what sets it apart.
 */
function distinguishingNames(all: ReadonlyArray<Readonly<Record<string, string>>>): (labels: Readonly<Record<string, string>>) => string {
  const names = new Set(all.flatMap((labels) => Object.keys(labels)));
  const distinguishing = [...names]
    .filter((name) => new Set(all.map((labels) => labels[name])).size > 1)
    .sort(compareText);
  return (labels) => {
    const shown = distinguishing.filter((name) => labels[name] !== undefined);
    const text = shown.map((name) => `${name}=${labels[name] ?? ""}`).join(", ");
    return text === "" ? labelKey(labels) || "{}" : text;
  };
}

function compareValues(a: number, b: number): number {
  // NaN sorts below every number so that real values are listed first.
  if (Number.isNaN(a)) return Number.isNaN(b) ? 0 : -1;
  if (Number.isNaN(b)) return 1;
  return a === b ? 0 : a < b ? -1 : 1;
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
