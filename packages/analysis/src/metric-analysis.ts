import { INCIDENT_LEAD_MS, type TimeWindow } from "@pes/contracts";
import type { Labels, MetricEvidence, MetricTrend, NoDataEvidence, ValuesEvidence } from "./evidence.js";
import { confinedTo } from "./placement.js";
import { saturationCheck, type SaturationRule } from "./saturation.js";
import { compareSeries, type Comparison } from "./series-comparison.js";
import { withTrend } from "./trend.js";
import { compareText, labelKey, usablePoints, type Series, type SeriesPoint } from "./series.js";

export {
  ABNORMAL_RATIO,
  ABNORMAL_SPREADS,
  FLAT_MIN_MS,
  MAX_MOVE_SEVERITY,
  ONSET_SHARE,
  ONSET_SPREADS,
  SATURATION_SEVERITY,
  USUAL_QUANTILE,
} from "./series-comparison.js";
export { compactLimit, SATURATION_SHARE, type LimitSeries, type SaturationDirection, type SaturationRule } from "./saturation.js";
export type { Series, SeriesPoint } from "./series.js";

/** Instant values listed at most; the evidence counts the rest. */
export const MAX_LISTED_VALUES = 5;
/**
 * A series spans the window when it starts and ends within this many steps (its smallest sample spacing)
 * of the earliest and latest samples of all series; one that does not is churn.
 */
export const CHURN_STEPS = 3;

/** One series' value at an instant. */
export interface InstantValue {
  labels: Labels;
  value: number;
}

export interface MetricContext {
  /** The action's title: the evidence cites it. */
  action: string;
  unit?: string;
  window: TimeWindow;
  /** The action's most important link, carried into the evidence. */
  link?: string;
  /** What the metric saturates against, if the playbook says (its `threshold` or `limit`). */
  saturation?: SaturationRule;
  /** Which way the metric goes in trouble, if the playbook says (its `direction`, with or without a limit). */
  direction?: "up" | "down";
}

interface SeriesFinding extends Comparison {
  trend?: MetricTrend;
  labels: Labels;
  key: string;
  /** The first and last finite samples in the window, to tell churn apart. */
  from: number;
  to: number;
}

/**
 * Compares each series' incident phase with its baseline and returns the series that moved most, or
 * why nothing could be compared.
 *
 * - phases: the baseline is [start, time − 5 min), the incident phase [time − 5 min, end]; each series is
 *   judged by `compareSeries` (robust score, change-point onset, saturation, flat line).
 * - churn: only series that span the window are judged, i.e. that start and end within 3 steps of the
 *   earliest and latest samples of all series. A series that stops early (a pod replaced, its rate fading
 *   as samples age out) or starts late is left out and counted (`churned`). When none spans the window
 *   (every pod replaced), the mean of all series at each instant is judged instead (`aggregated`); but
 *   when one of the series still there at the window's end reached its limit or threshold (each series'
 *   own), those are judged (a pod a leaking release brought, climbing since it started, is not averaged
 *   away with the pods just restarted).
 * - the worst series is reported: highest severity, then labels, so the order of the series does not matter;
 *   when several are at their limit, it is reported with the labels they share (`atLimit`): which of them
 *   moved most depends on a scrape or a baseline, not on the incident.
 *
 * NaN and ±Inf samples and samples outside the window are ignored. No data: `empty` (nothing in the
 * window), `stopped` (nothing from the incident phase on), `no-baseline` (nothing before it). The series
 * are read once, in order, and not kept: a connector may hand them over one at a time (a generator), so
 * that a large answer is never held whole; what is kept is one finding per series and one running sum
 * per instant (for the mean).
 */
export function analyzeSeries(series: Iterable<Series>, context: MetricContext): MetricEvidence | NoDataEvidence {
  const { window, action, unit, link } = context;
  const cited = { action, ...(link === undefined ? {} : { link }) };
  const start = window.start.getTime();
  const end = window.end.getTime();
  const baselineMs = window.time.getTime() - start;
  const lead = Math.min(INCIDENT_LEAD_MS, baselineMs / 2);
  const incidentFrom = window.time.getTime() - lead;

  const findings: SeriesFinding[] = [];
  const withoutBaseline: Array<{ key: string; latest: SeriesPoint }> = [];
  const sums = new Map<number, { sum: number; count: number }>();
  let seen = 0;
  let earliest = Infinity;
  let latest: SeriesPoint | undefined;
  let step = Infinity;
  let common: Labels | undefined;
  for (const item of series) {
    const points = usablePoints(item.points, start, end);
    const first = points[0];
    const last = points[points.length - 1];
    if (first === undefined || last === undefined) continue;
    seen += 1;
    earliest = Math.min(earliest, first.at);
    if (latest === undefined || last.at > latest.at) latest = last;
    common = common === undefined ? item.labels : sharedLabels(common, item.labels);
    for (let index = 0; index < points.length; index += 1) {
      const point = points[index] as SeriesPoint;
      if (index > 0) step = Math.min(step, point.at - (points[index - 1] as SeriesPoint).at);
      const sum = sums.get(point.at);
      if (sum === undefined) sums.set(point.at, { sum: point.value, count: 1 });
      else {
        sum.sum += point.value;
        sum.count += 1;
      }
    }
    if (last.at < incidentFrom) continue;
    const key = labelKey(item.labels);
    const check = context.saturation === undefined ? undefined : saturationCheck(context.saturation, item.labels);
    const compared = compareSeries(points, incidentFrom, check);
    const comparison = compared === undefined ? undefined : withTrend(compared, points, incidentFrom);
    if (comparison === undefined) withoutBaseline.push({ key, latest: last });
    else findings.push({ ...comparison, labels: item.labels, key, from: first.at, to: last.at });
  }
  if (latest === undefined) return { kind: "no-data", ...cited, reason: "empty" };

  const tolerance = Number.isFinite(step) ? CHURN_STEPS * step : 0;
  const latestAt = latest.at;
  const current = findings.filter((finding) => finding.to >= latestAt - tolerance);
  const whole = current.filter((finding) => finding.from <= earliest + tolerance);
  // A limit is each series' own: the mean of a pod at its limit and of pods just restarted is at none, and
  // a pod a rollout brought that climbs to its limit is the finding. When no series spans the window and
  // one still there at its end reached its limit, those still there are judged, each over the part it covers.
  const reachedLimit = current.some((finding) => finding.abnormal && finding.saturation !== undefined);
  const spanning = whole.length === 0 && reachedLimit ? current : whole;
  const saturates = context.saturation?.direction ?? context.direction;
  const base = { kind: "metric" as const, ...cited, ...(unit === undefined ? {} : { unit }), ...(saturates === undefined ? {} : { saturates }), baselineMs };

  if (spanning.length === 0 && seen > 1) {
    // Every series came or went: their mean at each instant is what can be compared.
    const means = [...sums].map(([at, { sum, count }]) => ({ at, value: sum / count })).sort((a, b) => a.at - b.at);
    const check = context.saturation === undefined ? undefined : saturationCheck(context.saturation, common ?? {});
    const compared = compareSeries(means, incidentFrom, check);
    const comparison = compared === undefined ? undefined : withTrend(compared, means, incidentFrom);
    if (comparison !== undefined) {
      return { ...base, ...evidenceOf(comparison), labels: withoutName(common ?? {}), seriesCount: seen, aggregated: true };
    }
  }
  if (spanning.length === 0) {
    const first = withoutBaseline.sort((a, b) => b.latest.value - a.latest.value || compareText(a.key, b.key))[0];
    if (first !== undefined) {
      return { kind: "no-data", ...cited, reason: "no-baseline", latest: first.latest.value, ...(unit === undefined ? {} : { unit }), baselineMs };
    }
    return { kind: "no-data", ...cited, reason: "stopped", lastAt: new Date(latestAt) };
  }

  spanning.sort((a, b) => b.severity - a.severity || compareText(a.key, b.key));
  const worst = spanning[0] as SeriesFinding;
  const identify = identifyingLabels(spanning.map((finding) => finding.labels));
  const churned = seen - spanning.length;
  const confined = confinedTo(spanning);
  // Several series at their limit (every pod of a service under a surge): the finding is about them all,
  // named by what they share, whichever reached it by a little more.
  const atLimit = spanning.filter((finding) => finding.abnormal && finding.saturation !== undefined);
  const named = worst.saturation !== undefined && atLimit.length > 1 ? atLimit.map((finding) => finding.labels).reduce(sharedLabels) : worst.labels;
  return {
    ...base,
    ...evidenceOf(worst),
    labels: identify(named),
    seriesCount: spanning.length,
    ...(worst.saturation !== undefined && atLimit.length > 1 ? { atLimit: atLimit.length } : {}),
    ...(churned > 0 ? { churned } : {}),
    ...(confined === undefined ? {} : { confined }),
  };
}

/**
 * Instant values, highest first (NaN last), each named by the labels that set its series apart; at most
 * MAX_LISTED_VALUES are kept, with the count of all. An instant has no baseline, so it is never abnormal.
 */
export function analyzeInstant(values: readonly InstantValue[], context: MetricContext): ValuesEvidence | NoDataEvidence {
  const { window, action, unit, link } = context;
  const cited = { action, ...(link === undefined ? {} : { link }) };
  if (values.length === 0) return { kind: "no-data", ...cited, reason: "none-at-time", at: window.time };
  const sorted = values.map((item) => ({ ...item, key: labelKey(item.labels) })).sort((a, b) => compareValues(b.value, a.value) || compareText(a.key, b.key));
  const identify = identifyingLabels(sorted.map((item) => item.labels));
  return {
    kind: "values",
    ...cited,
    ...(unit === undefined ? {} : { unit }),
    values: sorted.slice(0, MAX_LISTED_VALUES).map((item) => ({ labels: identify(item.labels), value: item.value })),
    count: sorted.length,
  };
}

/** The evidence fields of a comparison. */
function evidenceOf(comparison: Comparison & { trend?: MetricTrend }) {
  const { extreme, baseline, low, high, ratio, severity, abnormal, onset, endedAt, flat, saturation, trend } = comparison;
  return {
    value: extreme.value,
    baseline,
    low,
    high,
    ratio,
    severity,
    abnormal,
    ...(onset === undefined ? {} : { onset }),
    ...(endedAt === undefined ? {} : { endedAt }),
    ...(flat === true ? { flat } : {}),
    ...(saturation === undefined ? {} : { saturation }),
    ...(trend === undefined ? {} : { trend }),
  };
}

/**
 * The labels that identify each series among `all`: those whose values differ between the series (a
 * missing label counts as different), so that a name says what sets it apart. A series that has none of
 * them, or that is alone, keeps all of its labels but its metric name (`__name__`): the action's title
 * already says what is measured.
 */
function identifyingLabels(all: readonly Labels[]): (labels: Labels) => Labels {
  if (all.length < 2) return withoutName;
  const names = new Set(all.flatMap((labels) => Object.keys(labels)));
  const distinguishing = [...names].filter((name) => new Set(all.map((labels) => labels[name])).size > 1);
  return (labels) => {
    const shown = distinguishing.filter((name) => labels[name] !== undefined);
    return shown.length === 0 ? withoutName(labels) : Object.fromEntries(shown.map((name) => [name, labels[name] ?? ""]));
  };
}

function withoutName(labels: Labels): Labels {
  if (labels.__name__ === undefined) return labels;
  const { __name__: _name, ...rest } = labels;
  return rest;
}

/** The labels two label sets have in common, with the same value. */
function sharedLabels(a: Labels, b: Labels): Labels {
  return Object.fromEntries(Object.entries(a).filter(([name, value]) => b[name] === value));
}

function compareValues(a: number, b: number): number {
  // NaN sorts below every number so that real values are listed first.
  if (Number.isNaN(a)) return Number.isNaN(b) ? 0 : -1;
  if (Number.isNaN(b)) return 1;
  return a === b ? 0 : a < b ? -1 : 1;
}
