import type {
  ChangeEvidence,
  EventEvidence,
  Evidence,
  FaultEvidence,
  Labels,
  LogPatternEvidence,
  MetricEvidence,
  MetricSaturation,
  NoDataEvidence,
  ServiceCall,
  SymptomEvidence,
  ValuesEvidence,
} from "./evidence.js";
import { failureKindOf } from "./container-failures.js";
import { mechanismWords } from "./kubernetes-faults.js";
import { formatClock, formatPeriodBefore, formatRange, formatRatio, formatValue, formatValueOf } from "./human-format.js";
import { limitName } from "./limit-name.js";
import { truncate } from "./outcome-text.js";
import { listOf } from "./plain-text.js";
import { seriesName } from "./verdict.js";

/** One action's entry in an execution result (the contract's ActionResult). */
export interface ActionResultText {
  title: string;
  shortAnswer: string;
  mostImportantLink?: string;
}

const CHANGE_WORDS: Readonly<Record<ChangeEvidence["change"], string>> = {
  deploy: "deploy",
  config: "config change",
  restart: "restart",
};
const LOG_RATE_UNIT = "lines/min";
/** A change names at most this many of the pods it reached. */
const MAX_PODS_NAMED = 2;
/** A summary of an action's events that are not warnings names at most this many of their reasons. */
const MAX_EVENT_REASONS = 3;
/** Label text longer than this is cut: a short answer has 300 characters for everything. */
const MAX_LABEL_CHARS = 120;
/** A log pattern is cut to this many characters in a sentence, so that its numbers always show. */
const MAX_PATTERN_CHARS = 120;

/**
 * The action result of one action's evidence: its title, its short answer and its link. An action that
 * found several things (alerts, events, log patterns: its connector lists the strongest first) answers
 * with the first and how many more.
 */
export function actionResultOf(evidence: Evidence | readonly Evidence[], time: Date): ActionResultText {
  const all: readonly Evidence[] = isList(evidence) ? evidence : [evidence];
  const [first] = all;
  if (first === undefined) throw new RangeError("an action result needs at least one evidence");
  const more = all.length > 1 ? ` (and ${all.length - 1} more)` : "";
  return {
    title: first.action,
    shortAnswer: truncate(`${sentenceOf(first, time)}${more}`),
    ...(first.link === undefined ? {} : { mostImportantLink: first.link }),
  };
}

function isList(evidence: Evidence | readonly Evidence[]): evidence is readonly Evidence[] {
  return Array.isArray(evidence);
}

/**
 * One sentence on what an action found, starting with its title (and a metric's series), e.g. "p99 latency
 * (service=checkout) 1.8 s, 4.1× its level in the hour before (440 ms), since 14:05 UTC"; at most 300 characters. Times are UTC clock times, with
 * the date when not on the day of `time` (the issue). Pure: the same evidence always reads the same.
 */
export function shortAnswer(evidence: Evidence, time: Date): string {
  return truncate(sentenceOf(evidence, time));
}

function sentenceOf(evidence: Evidence, time: Date): string {
  const { action } = evidence;
  switch (evidence.kind) {
    case "metric":
      return metricAnswer(evidence, time);
    case "values":
      return valuesAnswer(evidence);
    case "log-pattern":
      return logPatternAnswer(evidence, time);
    case "event":
      return `${action}: ${describeEvent(evidence, time)}${evidence.message === undefined ? "" : `: ${evidence.message}`}`;
    case "alert":
      return `${action}: ${evidence.name}${evidence.level === undefined ? "" : ` (${evidence.level})`} firing${
        evidence.subject === undefined ? "" : ` for ${evidence.subject}`
      }${since(evidence.onset, time)}`;
    case "fault":
      return `${action}: ${faultSentence(evidence)}`;
    case "change":
      return `${action}: ${describeChange(evidence, time)}`;
    case "none":
      return `${action}: no ${evidence.what}`;
    case "answer":
      return `${action}: ${evidence.text}`;
    case "service-graph":
      return `${action}: ${callsText(evidence.calls)}`;
    case "no-data":
      return evidence.reason === "no-baseline"
        ? `${action} ${formatValue(evidence.latest, evidence.unit)}, ${noDataPhrase(evidence, time)}`
        : `${action}: ${noDataPhrase(evidence, time)}`;
    case "failed":
      return `${action}: ${evidence.reason}`;
    case "skipped":
      return `${action}: not run, ${missingText(evidence.missing)}`;
  }
}

/** A service graph in words: each caller with what it calls, "frontend calls cart, checkout; checkout calls payment". */
function callsText(calls: readonly ServiceCall[]): string {
  if (calls.length === 0) return "no calls between services";
  const byCaller = new Map<string, string[]>();
  for (const { caller, callee } of calls) byCaller.set(caller, [...(byCaller.get(caller) ?? []), callee]);
  return [...byCaller].map(([caller, callees]) => `${caller} calls ${callees.join(", ")}`).join("; ");
}

function metricAnswer(evidence: MetricEvidence, time: Date): string {
  const { unit, baseline, ratio } = evidence;
  const subject = metricSubject(evidence);
  const period = formatPeriodBefore(evidence.baselineMs);
  const value = formatValue(evidence.value, unit);
  const baselineText = formatValue(baseline, unit);
  const onset = `${evidence.onset === undefined ? "" : `, ${sinceWords(evidence, evidence.onset, time)}`}${over(evidence, time)}`;
  const which = seriesNote(evidence);
  if (evidence.saturation !== undefined) {
    const direction = evidence.value > baseline ? "up" : "down";
    return `${subject} ${saturationText(evidence, evidence.saturation)}, ${direction} from ${baselineText} in ${period}${onset}${which}`;
  }
  if (evidence.flat === true) {
    return `${subject} ${value}, flat${since(evidence.onset, time)} after moving within ${formatRange(evidence.low, evidence.high, unit)} over ${period}${which}`;
  }
  if (evidence.abnormal) {
    const change =
      ratio > 0 && Number.isFinite(ratio)
        ? `${formatRatio(ratio)}× its level in ${period} (${baselineText})`
        : `${evidence.value > baseline ? "up" : "down"} from ${baselineText} in ${period}`;
    return `${subject} ${value}, ${change}${onset}${which}`;
  }
  // A relative tolerance absorbs float noise (rate() of steady counters wobbles in the 15th digit).
  const slack = 1e-6 * Math.max(Math.abs(evidence.low), Math.abs(evidence.high));
  const inRange = evidence.value >= evidence.low - slack && evidence.value <= evidence.high + slack;
  // "×" is kept for abnormal answers; a normal move reads as a percentage.
  const percent = Math.round(Math.abs(ratio - 1) * 100);
  const usual = inRange
    ? `within its usual range (${formatRange(evidence.low, evidence.high, unit)} over ${period})`
    : percent === 0
      ? `close to its level in ${period} (${baselineText})`
      : `${percent}% ${ratio > 1 ? "above" : "below"} its level in ${period} (${baselineText}), within normal variation`;
  return `${subject} ${value}, ${usual}${which}`;
}

/**
 * A metric's title with the series it is about: "probe success (instance=api.example:443)", "CPU usage
 * (mean of 6 series)"; the title alone for a series without labels.
 */
function metricSubject(evidence: MetricEvidence): string {
  const labels = Object.keys(evidence.labels).length === 0 ? "" : labelText(evidence.labels);
  if (evidence.aggregated === true) return `${evidence.action} (mean of ${evidence.seriesCount} series${labels === "" ? "" : `: ${labels}`})`;
  return labels === "" ? evidence.action : `${evidence.action} (${labels})`;
}

/**
 * "; worst of 3 series, leaving out 2 that started or stopped in the window", "; 4 of 4 series at their
 * limit": how many were compared.
 */
function seriesNote(evidence: MetricEvidence): string {
  const notes: string[] = [];
  if (evidence.atLimit !== undefined) notes.push(`${evidence.atLimit} of ${evidence.seriesCount} series at their limit`);
  else if (evidence.seriesCount > 1 && evidence.aggregated !== true)
    notes.push(`${evidence.abnormal ? "worst" : "most changed"} of ${evidence.seriesCount} series`);
  const churned = evidence.churned ?? 0;
  if (churned > 0) notes.push(`leaving out ${churned}${notes.length === 0 ? ` series` : ""} that started or stopped in the window`);
  return notes.length === 0 ? "" : `; ${notes.join(", ")}`;
}

/**
 * "98 of 100 (98% of its max connections)", "1.2 of 60 GiB (2% of its filesystem size)", "95%, at or
 * above its threshold of 90%": a saturated value against what it reached, the limit named by what it is.
 */
function saturationText(evidence: MetricEvidence, saturation: MetricSaturation): string {
  if (saturation.of === undefined) return `${formatValue(evidence.value, evidence.unit)}, ${thresholdText(evidence, saturation)}`;
  return `${formatValueOf(evidence.value, saturation.limit, evidence.unit)} (${shareOf(evidence.value, saturation.limit)} of ${limitName(saturation.of)})`;
}

/** "at or above its threshold of 90%": in a sentence that may cite its action in parentheses next. */
function thresholdText(evidence: MetricEvidence, saturation: MetricSaturation): string {
  return `at or ${saturation.direction === "up" ? "above" : "below"} its threshold of ${formatValue(saturation.limit, evidence.unit)}`;
}

/** "98%": a value as a share of its limit. */
function shareOf(value: number, limit: number): string {
  return `${formatRatio((value / limit) * 100)}%`;
}

function valuesAnswer(evidence: ValuesEvidence): string {
  const { action, unit, values, count } = evidence;
  const first = values[0];
  if (first === undefined) return `${action}: no values`;
  if (count === 1) return `${action} ${formatValue(first.value, unit)}`;
  const listed = values.map((item) => `${formatValue(item.value, unit)} (${labelText(item.labels)})`);
  const more = count > values.length ? `, and ${count - values.length} more` : "";
  return `${action}: ${listed.join(", ")}${more}`;
}

/**
 * `Error logs: "connection refused to <ip>:<num>" 42 lines, not seen in the hour before, since 14:05 UTC —
 * e.g. "connection refused to 10.0.3.7:5432"`; for every line together (`total`), the count and rates
 * first and the most common pattern last. The pattern is cut so that the numbers always show.
 */
function logPatternAnswer(evidence: LogPatternEvidence, time: Date): string {
  const { action, ratio, count } = evidence;
  const period = formatPeriodBefore(evidence.baselineMs);
  const rate = formatValue(evidence.perMinute, LOG_RATE_UNIT);
  const before = formatValue(evidence.baselinePerMinute, LOG_RATE_UNIT);
  const pattern = `"${truncate(evidence.pattern, MAX_PATTERN_CHARS)}"`;
  const subject = evidence.total === true ? "" : ` ${pattern}`;
  const context =
    evidence.total === true
      ? evidence.pattern === ""
        ? ""
        : `; most common: ${pattern}`
      : evidence.example === undefined
        ? ""
        : ` — e.g. "${evidence.example}"`;
  if (!evidence.abnormal) {
    const amount = count === undefined ? rate : `${linesText(count)} (${rate})`;
    return `${action}:${subject} ${amount}, within normal variation of its rate in ${period} (${before})${context}`;
  }
  const change =
    ratio > 0 && Number.isFinite(ratio)
      ? `${formatRatio(ratio)}× its rate in ${period} (${before})`
      : ratio === Infinity
        ? `not seen in ${period}`
        : `down from ${before} in ${period}`;
  // A new pattern's count says it all; a grown one's rate is what its ratio compares.
  const amount = count === undefined ? rate : ratio === Infinity ? linesText(count) : `${linesText(count)} (${rate})`;
  return `${action}:${subject} ${amount}, ${change}${evidence.onset === undefined ? "" : `, since ${formatClock(evidence.onset, time)}`}${context}`;
}

/** "1 line", "42 lines", "1.2k lines". */
function linesText(count: number): string {
  return `${formatValue(count)} line${count === 1 ? "" : "s"}`;
}

/**
 * "deploy of checkout to v1.2.3 at 14:01 UTC", "restart of pod/checkout-1 at 14:04 UTC", and the pods it
 * reached when known: "… at 14:01 UTC on pod/checkout-7d9f8c6b5-x2k4p and pod/checkout-7d9f8c6b5-b5n2q".
 */
export function describeChange(change: ChangeEvidence, time: Date): string {
  const detail = change.detail === undefined ? "" : ` to ${change.detail}`;
  const pods = change.pods ?? [];
  const shown = pods.slice(0, MAX_PODS_NAMED);
  const more = pods.length - shown.length;
  const where = pods.length === 0 ? "" : ` on ${more === 0 ? listOf(shown) : `${shown.join(", ")} and ${more} more ${more === 1 ? "pod" : "pods"}`}`;
  return `${CHANGE_WORDS[change.change]} of ${change.subject}${detail} at ${formatClock(change.at, time)}${where}`;
}

/**
 * "Events in shop: 14 normal events (Scheduled, Pulling, Started…)": one action's events that are not
 * warnings, counted, with their reasons most frequent first (ties in the order listed). A rollout alone
 * brings a dozen (a pod scheduled, its image pulled, its container started): context, never a claim, so
 * the bottom line counts them rather than listing each one.
 */
export function normalEventsSummary(events: readonly EventEvidence[]): string {
  const counts = new Map<string, number>();
  for (const event of events) counts.set(event.reason, (counts.get(event.reason) ?? 0) + 1);
  const reasons = [...counts].sort((a, b) => b[1] - a[1]).map(([reason]) => reason);
  const shown = reasons.slice(0, MAX_EVENT_REASONS).join(", ");
  const action = events[0]?.action ?? "";
  return `${action}: ${events.length} normal event${events.length === 1 ? "" : "s"} (${shown}${reasons.length > MAX_EVENT_REASONS ? "…" : ""})`;
}

/** "OOMKilled on pod/checkout-7d9f at 14:04 UTC"; with `quoted`, a failed pull's or start's message after its subject. */
function describeEvent(event: EventEvidence, time: Date, quoted = false): string {
  return `${event.reason} on ${event.subject}${quoted ? failureQuote(event) : ""}${event.onset === undefined ? "" : ` at ${formatClock(event.onset, time)}`}`;
}

/** How much of a kubelet's message the words quote. */
const MAX_QUOTED_MESSAGE = 200;

/** ` (Failed to pull image "…": … not found)`: the message of a pull or a start that failed, which names the image or the command at fault. */
function failureQuote(event: EventEvidence): string {
  return event.message !== undefined && failureKindOf(event.reason, event.message) !== undefined ? ` (${truncate(event.message, MAX_QUOTED_MESSAGE)})` : "";
}

/** "no data in the window", "no data after 13:54 UTC", "no data in the hour before to compare with". */
export function noDataPhrase(evidence: NoDataEvidence, time: Date): string {
  if (evidence.reason === "too-few") return `too few lines to judge (${evidence.count} of a new pattern: ${evidence.pattern})`;
  return `no data ${noDataWhen(evidence, time)}`;
}

/** Where or when there was no data: "in the window", "after 13:54 UTC", "at 14:08 UTC". */
export function noDataWhen(evidence: NoDataEvidence, time: Date): string {
  switch (evidence.reason) {
    case "empty":
      return "in the window";
    case "stopped":
      return `after ${formatClock(evidence.lastAt, time)}`;
    case "no-baseline":
      return `in ${formatPeriodBefore(evidence.baselineMs)} to compare with`;
    case "none-at-time":
      return `at ${formatClock(evidence.at, time)}`;
    case "too-few":
      return `enough to judge a new pattern (${evidence.count} lines: ${evidence.pattern})`;
  }
}

/** "the issue has no attribute pod": why an action was not run. */
export function missingText(missing: readonly string[]): string {
  return `the issue has no attribute${missing.length === 1 ? "" : "s"} ${missing.join(", ")}`;
}

/**
 * A symptom in a few words, for a gadget's highlights and as the first symptom in the bottom line:
 * "p99 latency (service=checkout) rose 4.1× since 14:05 UTC", "connections (instance=db-1) at 98% of its
 * max connections, 100, since 14:02 UTC", "Alerts: HighLatency firing since 14:06 UTC". A metric names its series.
 */
export function symptomMovement(symptom: SymptomEvidence, time: Date): string {
  const { action } = symptom;
  switch (symptom.kind) {
    case "metric":
      return `${metricSubject(symptom)} ${metricMovement(symptom, time)}`;
    case "log-pattern":
      return `${patternSubject(symptom)} ${symptom.ratio === Infinity ? `appeared${at(symptom.onset, time)}` : movement(symptom.ratio, symptom.onset, time)}`;
    case "alert":
      return `${action}: ${symptom.name} firing${since(symptom.onset, time)}`;
    case "event":
      return `${action}: ${describeEvent(symptom, time, true)}`;
    case "fault":
      return `${action}: ${faultSentence(symptom)}`;
  }
}

/**
 * A symptom against its baseline, naming its gadget when the title differs, for the bottom line:
 * "p99 latency (service=checkout) 4.1× its level in the hour before (Checkout latency), since 14:05 UTC".
 */
export function symptomLevel(symptom: SymptomEvidence, gadget: string, time: Date): string {
  const { action } = symptom;
  const cited = gadget === action ? "" : ` (${gadget})`;
  switch (symptom.kind) {
    case "metric":
    case "log-pattern": {
      const period = formatPeriodBefore(symptom.baselineMs);
      const what = symptom.kind === "metric" ? "level" : "rate";
      const { ratio } = symptom;
      let change: string;
      if (symptom.kind === "metric" && symptom.saturation !== undefined) change = saturationLevel(symptom, symptom.saturation);
      else if (symptom.kind === "metric" && symptom.flat === true)
        change = `flat at ${formatValue(symptom.value, symptom.unit)} after moving within ${formatRange(symptom.low, symptom.high, symptom.unit)} in ${period}`;
      else if (Number.isNaN(ratio)) change = "abnormal";
      else if (ratio === Infinity) change = symptom.kind === "metric" ? `up from zero in ${period}` : `not seen in ${period}`;
      else if (ratio > 1) change = `${formatRatio(ratio)}× its ${what} in ${period}`;
      else if (ratio > 0) change = `down to ${formatRatio(ratio)}× its ${what} in ${period}`;
      else if (ratio === 0) change = `down to zero from its ${what} in ${period}`;
      else change = `changed sign against ${period}`;
      const subject = symptom.kind === "metric" ? metricSubject(symptom) : patternSubject(symptom);
      const ended = symptom.kind === "metric" ? over(symptom, time) : "";
      return `${subject} ${change}${cited}${symptom.onset === undefined ? "" : `, ${sinceWords(symptom, symptom.onset, time)}`}${ended}`;
    }
    case "alert":
      return `${action}: ${symptom.name} firing${cited}${symptom.onset === undefined ? "" : `, since ${formatClock(symptom.onset, time)}`}`;
    case "event":
      return `${action}: ${symptom.reason} on ${symptom.subject}${failureQuote(symptom)}${cited}${symptom.onset === undefined ? "" : `, at ${formatClock(symptom.onset, time)}`}`;
    case "fault":
      return `${action}${cited}: ${faultSentence(symptom)}`;
  }
}

/** A fault in the cluster's state: "deployment/adservice cannot be scheduled: no node matches its node selector (…)". */
export function faultSentence(fault: FaultEvidence): string {
  return `${fault.subject} ${mechanismWords(fault.mechanism)} (${fault.detail})`;
}

/**
 * "rose 4.1× since 14:05 UTC", "at 100% of its memory limit, 512 MiB, since 14:02 UTC", "flat at 42 since
 * 14:03 UTC": a limit is named with its value, which nothing else in the clause gives.
 */
function metricMovement(symptom: MetricEvidence, time: Date): string {
  const { saturation } = symptom;
  const from = symptom.onset === undefined ? "" : ` ${sinceWords(symptom, symptom.onset, time)}`;
  if (saturation === undefined) {
    return symptom.flat === true ? `flat at ${formatValue(symptom.value, symptom.unit)}${from}` : movement(symptom.ratio, symptom.onset, time);
  }
  if (saturation.of === undefined) {
    return `${saturation.direction === "up" ? "reached" : "fell to"} its threshold of ${formatValue(saturation.limit, symptom.unit)}${from}`;
  }
  const limit = `${limitName(saturation.of)}, ${formatValue(saturation.limit, symptom.unit)}`;
  return `${saturation.direction === "up" ? "at" : "down to"} ${shareOf(symptom.value, saturation.limit)} of ${limit}${from === "" ? "" : `,${from}`}`;
}

/** "at 98 of 100, 98% of its max connections", "at 95%, at or above its threshold of 90%": saturation for the bottom line. */
function saturationLevel(symptom: MetricEvidence, saturation: MetricSaturation): string {
  if (saturation.of === undefined) return `at ${formatValue(symptom.value, symptom.unit)}, ${thresholdText(symptom, saturation)}`;
  return `at ${formatValueOf(symptom.value, saturation.limit, symptom.unit)}, ${shareOf(symptom.value, saturation.limit)} of ${limitName(saturation.of)}`;
}

/**
 * "since 14:05 UTC"; for a trend, "climbing since 11:02 UTC" (when the climb began, not when it crossed a
 * line), or "climbing since before 13:05 UTC" when it began before the data.
 */
function sinceWords(symptom: MetricEvidence | LogPatternEvidence, onset: Date, time: Date): string {
  const trend = symptom.kind === "metric" ? symptom.trend : undefined;
  if (trend === undefined) return `since ${formatClock(onset, time)}`;
  return `${trend.perHour < 0 ? "falling" : "climbing"} since ${trend.beforeWindow ? "before " : ""}${formatClock(onset, time)}`;
}

/** "rose 4.1× since 14:05 UTC", "fell to 0.25×", "rose from zero": which way a ratio moved. */
function movement(ratio: number, onset: Date | undefined, time: Date): string {
  const from = since(onset, time);
  if (Number.isNaN(ratio)) return `abnormal${from}`;
  if (ratio === Infinity) return `rose from zero${from}`;
  if (ratio > 1) return `rose ${formatRatio(ratio)}×${from}`;
  if (ratio > 0) return `fell to ${formatRatio(ratio)}×${from}`;
  if (ratio === 0) return `fell to zero${from}`;
  return `changed sign${from}`;
}

/** `Error logs: "timeout <*>"`, or the title alone for every line together (`total`). */
function patternSubject(evidence: LogPatternEvidence): string {
  return evidence.total === true ? `${evidence.action} (all lines)` : `${evidence.action}: "${truncate(evidence.pattern, MAX_PATTERN_CHARS)}"`;
}

/** ", over by 14:07 UTC" for a move that ended (back within its usual range, or off its limit); "" while it lasts. */
function over(evidence: MetricEvidence, time: Date): string {
  return evidence.endedAt === undefined ? "" : `, over by ${formatClock(evidence.endedAt, time)}`;
}

function since(onset: Date | undefined, time: Date): string {
  return onset === undefined ? "" : ` since ${formatClock(onset, time)}`;
}

/** " at 14:05 UTC": when something began that was not there before (a new log pattern appeared). */
function at(onset: Date | undefined, time: Date): string {
  return onset === undefined ? "" : ` at ${formatClock(onset, time)}`;
}

/**
 * "service=checkout, zone=a": a series named by its labels, sorted by name; "{}" for none. At most
 * MAX_LABEL_CHARS, so that the value still fits in a short answer after a long label set.
 */
function labelText(labels: Labels): string {
  const text = seriesName(labels);
  if (text === "") return "{}";
  return text.length > MAX_LABEL_CHARS ? `${text.slice(0, MAX_LABEL_CHARS - 1)}…` : text;
}
