/**
 * What an action found, as data. A connector returns one Evidence per action; the analysis ranks the
 * evidence of an execution into likely causes; words are rendered from it last and never parsed back.
 * Every item names the action it came from, so that every claim built on it cites that action.
 */

/** A series' labels, e.g. `{ service: "checkout" }`. */
export type Labels = Readonly<Record<string, string>>;

export type { TimeWindow } from "@pes/contracts";

/** What every item carries: where it came from. */
export interface Cited {
  /** The title of the action it came from (templated): the citation of every claim built on it. */
  action: string;
  /** Where a person sees the data behind it: the action's most important link. */
  link?: string;
}

/** A metric compared with its own level before the issue (the series that moved most, if several). */
export interface MetricEvidence extends Cited {
  kind: "metric";
  unit?: string;
  /**
   * The labels that identify the series: with several series, only those that set it apart from the
   * others (e.g. `{ instance: "db-1:9187" }`); with one, all of its labels but the metric name; for a
   * mean (`aggregated`), the labels all its series share; with several at their limit (`atLimit`), those
   * they share.
   */
  labels: Labels;
  /** How many series were compared (averaged, when `aggregated`). */
  seriesCount: number;
  /**
   * How many series were left out because they started or stopped within the window while others went
   * on (pods replaced in a rollout): churn, not an anomaly. Absent when none.
   */
  churned?: number;
  /**
   * How many of the series compared were at their limit, when more than one: the finding is then about
   * them all, and `labels` are what they share (which of them moved most is a matter of a scrape or a
   * baseline, and of their names). Absent otherwise.
   */
  atLimit?: number;
  /** True when no series spanned the window: the value is then the mean of all series at each instant. */
  aggregated?: boolean;
  /**
   * The value compared: the extreme of the incident phase (the maximum if it rose, the minimum if it
   * fell), the most saturated value when `saturation`, the value it stopped at when `flat`.
   */
  value: number;
  /** The median before the incident phase. */
  baseline: number;
  /** The lowest and highest values before the incident phase: the usual range. */
  low: number;
  high: number;
  /**
   * value / baseline: 4.1 = rose 4.1×, 0.25 = fell to a quarter, Infinity = rose from 0, 0 = fell to 0,
   * negative = changed sign.
   */
  ratio: number;
  /**
   * How far from normal, to rank symptoms, on one scale: a move counts its ratio's distance from 1 (4 for
   * both 4× and 0.25×), at most 1000 (a move from or to 0); abnormal from 2 on. A flat line counts at
   * least 2. Saturation counts 10 000 plus its move: above any move (MAX_MOVE_SEVERITY, SATURATION_SEVERITY).
   */
  severity: number;
  /** Whether the analysis judged the change abnormal. */
  abnormal: boolean;
  /** When the abnormal change began (its change point, not when it crossed a threshold), if the data shows it. */
  onset?: Date;
  /**
   * When the abnormal change was over: its last samples are back within the usual band (or off the limit),
   * from this one on. Absent while it lasts, and for a metric judged normal.
   */
  endedAt?: Date;
  /** The metric stopped moving: one exact value since `onset` after varying in the baseline. */
  flat?: boolean;
  /** The metric reached its limit or threshold in the incident phase (at `value`). */
  saturation?: MetricSaturation;
  /**
   * Which way the playbook says the metric saturates or goes in trouble (a limit's or threshold's
   * direction, or a `direction` alone): one that goes up in trouble (CPU, throttling, retransmissions)
   * falling is relief, never an outage.
   */
  saturates?: "up" | "down";
  /**
   * The slow climb (or fall) that led to the move, when the baseline shows one (trend.ts): `onset` is
   * then when the climb began, not when it crossed its limit.
   */
  trend?: MetricTrend;
  /** Only the series of one node (or zone) moved; the same metric elsewhere held (placement.ts). */
  confined?: MetricPlacement;
  /** The period compared with: how long before the issue time the baseline starts, in ms. */
  baselineMs: number;
}

/** Where a metric's abnormal series are, when they are all on one node or in one zone. */
export interface MetricPlacement {
  /** The label that places them: `node`, else `zone`. */
  label: string;
  value: string;
  /** How many series were abnormal, of how many judged. */
  abnormal: number;
  of: number;
}

/** A metric that moved along a line for a long time before the incident: a leak, a queue filling up. */
export interface MetricTrend {
  /** When the line began (when it had moved clear of the noise); the first sample when `beforeWindow`. */
  since: Date;
  /** How far it moves per hour, in the metric's unit (negative: falling). */
  perHour: number;
  /** It was already moving at the first sample: it began before the data, which cannot date it. */
  beforeWindow: boolean;
}

/** What a saturated metric reached (the playbook's `limit` or `threshold`). */
export interface MetricSaturation {
  /** The limit at the instant of `value` (the limit series' value), or the threshold. */
  limit: number;
  /**
   * The limit's metric name: its series' `__name__`, else the metric its query reads (e.g.
   * `pg_settings_max_connections`), else the query; absent for a threshold. Words are made from it last.
   */
  of?: string;
  /**
   * `up`: at ≥ 95 % of the limit, or at or above the threshold; `down`: at ≤ 5 % of the limit, or at or
   * below the threshold (free bytes falling to nothing).
   */
  direction: "up" | "down";
}

/** Values at one instant (no baseline, so never abnormal): the highest first. */
export interface ValuesEvidence extends Cited {
  kind: "values";
  unit?: string;
  /** The highest values first, at most a handful, each with the labels that set its series apart. */
  values: ReadonlyArray<{ labels: Labels; value: number }>;
  /** How many values there were in all. */
  count: number;
}

/** A log pattern whose frequency changed (or that appeared) around the issue. */
export interface LogPatternEvidence extends Cited {
  kind: "log-pattern";
  /** The pattern as the log source groups lines, e.g. "connection refused to <_>". */
  pattern: string;
  /** Matching lines per minute in the incident phase, and before it. */
  perMinute: number;
  baselinePerMinute: number;
  /** perMinute / baselinePerMinute (Infinity: a new pattern). */
  ratio: number;
  severity: number;
  abnormal: boolean;
  onset?: Date;
  baselineMs: number;
  /** One line of the pattern from the incident phase, as the source gave it (cut to a few hundred characters). */
  example?: string;
  /** How many lines of the pattern the incident phase holds (estimated when the lines read were a sample). */
  count?: number;
  /** The labels of the streams its lines came from that set them apart from the other streams read; absent with one stream. */
  labels?: Labels;
  /**
   * When true the rates and count are of every matching line, not of one pattern (nothing grew on its
   * own, or the lines moved together); `pattern` is then the most common one of the incident phase, for
   * context, or "" when no line of it was read.
   */
  total?: boolean;
}

/** Something that happened to an object, e.g. a Kubernetes event. */
export interface EventEvidence extends Cited {
  kind: "event";
  /** What it happened to, e.g. "pod/checkout-7d9f". */
  subject: string;
  /** Its reason, e.g. "OOMKilled". */
  reason: string;
  /** The pod's container it is about, when the event or the pod's status names it. */
  container?: string;
  message?: string;
  /** A warning is a symptom; any other event is context. */
  warning: boolean;
  /** When it began: a recurring event's first occurrence, not its last. */
  onset?: Date;
}

/**
 * What a cluster's state shows is wrong, read from the objects themselves (kubernetes-state-reading.ts):
 * a mechanism that keeps a workload from running or from being reached, which needs no change before it
 * to be a cause.
 */
export interface FaultEvidence extends Cited {
  kind: "fault";
  /** The mechanism, fine-grained: `unschedulable/node-selector`, `image-pull/not-found`, `quota/pods`. */
  mechanism: string;
  /** The object at fault: `deployment/adservice`, `service/cartservice`, `node/worker-02`, `namespace/boutique`. */
  subject: string;
  /** The decisive field or message, quoted as the state holds it. */
  detail: string;
  /** What would undo it, naming the object ("Create the ServiceAccount adservice in boutique"). */
  remedy: string;
  /**
   * `decisive`: the state says so itself (the scheduler's message, a selector that matches no pod, a
   * condition's message); `suggestive`: read from what fails around it (a log line naming a host that is
   * no Service).
   */
  certainty: "decisive" | "suggestive";
  /** The objects it keeps from working (`pod/adservice-7b5ff9bbd7-r2s5r`), at most a few. */
  affects: readonly string[];
  /** When it began, when the state dates it (an event's first time, a condition's transition). */
  onset?: Date;
}

/** A firing alert. */
export interface AlertEvidence extends Cited {
  kind: "alert";
  /** The alert's name, e.g. "HighLatency". */
  name: string;
  /** What it fires for, e.g. "service=checkout". */
  subject?: string;
  /**
   * The labels `subject` is written from (its name and severity apart): to tell the page and an upstream's
   * alerts apart, and to tie a node's alert to the pods it hosts by its `node`.
   */
  labels?: Labels;
  /** Its severity as the alerting system labels it, e.g. "critical". */
  level?: string;
  /** When it started firing. */
  onset?: Date;
}

export type ChangeType = "deploy" | "config" | "restart";

/** A deploy, a configuration change or a restart: a cause candidate when it precedes the symptoms. */
export interface ChangeEvidence extends Cited {
  kind: "change";
  change: ChangeType;
  /** What changed, e.g. "checkout". */
  subject: string;
  /** The version or the name of what changed, e.g. "v1.2.3". */
  detail?: string;
  at: Date;
  /** The pods it reached, when its evidence names them (a release read from the kubelet's events): `pod/checkout-7d9f8c6b5-x2k4p`. */
  pods?: readonly string[];
}

/**
 * A check that found nothing to report: no alert firing, no warning event, no rollout. It was checked,
 * so it is not "no data": it reads as normal. `what` says what was looked for ("alerts firing").
 */
export interface NoneEvidence extends Cited {
  kind: "none";
  /** What was looked for, plural, as in "no alerts firing", "no warning events". */
  what: string;
}

/** A data source's own answer, as it gave it (the connector has redacted secrets from it). */
export interface AnswerEvidence extends Cited {
  kind: "answer";
  text: string;
}

/** One service calling another, as a service graph says (see ServiceGraph). */
export interface ServiceCall {
  caller: string;
  callee: string;
}

/**
 * Who calls whom: an answer of its own (listed with the short answers), and what the ranking reads to
 * tell where a slowdown begins (latency-origin.ts) and whose requests fell only because a caller stalled.
 */
export interface ServiceGraphEvidence extends Cited {
  kind: "service-graph";
  calls: readonly ServiceCall[];
}

/** Why an action had nothing to compare. "No data" is not "normal": nothing was checked. */
export type NoDataReason =
  /** No sample in the whole window. */
  | { reason: "empty" }
  /** Samples stopped before the incident phase. */
  | { reason: "stopped"; lastAt: Date }
  /** Data at the issue, none before it: `latest` is the last value seen. */
  | { reason: "no-baseline"; latest: number; unit?: string; baselineMs: number }
  /** An instant query found nothing at the issue time. */
  | { reason: "none-at-time"; at: Date }
  /** A log pattern new in the incident phase, with too few lines (`count`) to tell a fault from chance. */
  | { reason: "too-few"; pattern: string; count: number };

export type NoDataEvidence = Cited & { kind: "no-data" } & NoDataReason;

/** An action that could not answer. */
export interface FailedEvidence extends Cited {
  kind: "failed";
  /** Why, in plain words (e.g. "timed out after 15 s"); the connector has redacted secrets from it. */
  reason: string;
  /** The budget that stopped it before it started, or cut its wait (execution-budget.ts in the contracts). */
  budget?: string;
}

/** An action not run because the issue lacks attributes its templates need. */
export interface SkippedEvidence extends Cited {
  kind: "skipped";
  missing: readonly string[];
}

/** One action's evidence, tagged by `kind`. */
export type Evidence =
  | MetricEvidence
  | ValuesEvidence
  | LogPatternEvidence
  | EventEvidence
  | AlertEvidence
  | FaultEvidence
  | ChangeEvidence
  | NoneEvidence
  | AnswerEvidence
  | ServiceGraphEvidence
  | NoDataEvidence
  | FailedEvidence
  | SkippedEvidence;

export type EvidenceKind = Evidence["kind"];

/** The kinds that can be a symptom: when abnormal (metrics, log patterns), firing (alerts) or a warning (events). */
export type SymptomEvidence = MetricEvidence | LogPatternEvidence | AlertEvidence | EventEvidence | FaultEvidence;

/**
 * The same evidence with `map` applied to every text that came from a data source or an issue (labels,
 * answers, reasons, names, patterns, messages, the action's title); kinds, enums, numbers, dates and the
 * link are kept. For a connector to redact secrets from whatever it returns, by construction: words are
 * rendered later, so this is the one place where every such text passes.
 */
export function mapEvidenceText<E extends Evidence>(evidence: E, map: (text: string) => string): E;
export function mapEvidenceText(evidence: Evidence, map: (text: string) => string): Evidence {
  const labels = (from: Labels): Labels => Object.fromEntries(Object.entries(from).map(([name, value]) => [map(name), map(value)]));
  const action = map(evidence.action);
  switch (evidence.kind) {
    case "metric":
      return {
        ...evidence,
        action,
        labels: labels(evidence.labels),
        ...(evidence.saturation?.of === undefined ? {} : { saturation: { ...evidence.saturation, of: map(evidence.saturation.of) } }),
      };
    case "values":
      return { ...evidence, action, values: evidence.values.map((item) => ({ ...item, labels: labels(item.labels) })) };
    case "log-pattern":
      return { ...evidence, action, pattern: map(evidence.pattern), ...(evidence.example === undefined ? {} : { example: map(evidence.example) }) };
    case "event":
      return {
        ...evidence,
        action,
        subject: map(evidence.subject),
        reason: map(evidence.reason),
        ...(evidence.container === undefined ? {} : { container: map(evidence.container) }),
        ...(evidence.message === undefined ? {} : { message: map(evidence.message) }),
      };
    case "alert":
      return {
        ...evidence,
        action,
        name: map(evidence.name),
        ...(evidence.subject === undefined ? {} : { subject: map(evidence.subject) }),
        ...(evidence.labels === undefined ? {} : { labels: labels(evidence.labels) }),
        ...(evidence.level === undefined ? {} : { level: map(evidence.level) }),
      };
    case "service-graph":
      return { ...evidence, action, calls: evidence.calls.map(({ caller, callee }) => ({ caller: map(caller), callee: map(callee) })) };
    case "change":
      return {
        ...evidence,
        action,
        subject: map(evidence.subject),
        ...(evidence.detail === undefined ? {} : { detail: map(evidence.detail) }),
        ...(evidence.pods === undefined ? {} : { pods: evidence.pods.map(map) }),
      };
    case "fault":
      return {
        ...evidence,
        action,
        subject: map(evidence.subject),
        detail: map(evidence.detail),
        remedy: map(evidence.remedy),
        affects: evidence.affects.map(map),
      };
    case "answer":
      return { ...evidence, action, text: map(evidence.text) };
    case "failed":
      return { ...evidence, action, reason: map(evidence.reason) };
    case "skipped":
      return { ...evidence, action, missing: evidence.missing.map(map) };
    case "none":
      return { ...evidence, action, what: map(evidence.what) };
    case "no-data":
      return evidence.reason === "too-few" ? { ...evidence, action, pattern: map(evidence.pattern) } : { ...evidence, action };
  }
}
