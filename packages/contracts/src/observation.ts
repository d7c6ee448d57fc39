import { z } from "zod";
import { StoppingBudget } from "./execution-budget.js";
import { Deployment, KubernetesEvent, KubernetesState, Pod, ReplicaSet } from "./kubernetes-objects.js";

/**
 * What an action's data source answered, as parsed from its wire format: a connector's fetch returns one,
 * and the analysis turns it into evidence (a pure function of the observation and the window), so that an
 * execution can be replayed offline from the observations it kept (evidence bundles). An observation
 * holds only what the source answered, plus the few settings the action declared for reading it (a unit,
 * a threshold): never a data source's URL, credentials or headers.
 */

/**
 * Thrown while an observation is read when part of it turns out not to be what its source sends (a
 * Prometheus answer is read one series at a time, after the fetch): the analysis makes the action
 * `failed` with this message, as the fetch would have.
 */
export class UnreadableObservationError extends Error {
  override name = "UnreadableObservationError";
}

const Labels = z.record(z.string(), z.string());

/**
 * A list that may be read lazily: an array in a bundle, an iterable read from the answer's bytes in a
 * worker (a large Prometheus answer is never held whole, see prometheus-answer.ts in the connectors).
 */
function readOnce<T extends z.ZodType>(item: T) {
  return z.array(item).transform((items): Iterable<z.output<T>> => items);
}

/** `[unix seconds, "value"]`: Prometheus writes sample values as strings ("NaN", "+Inf" included). */
export type PrometheusSample = [number, string];

function isSample(value: unknown): value is PrometheusSample {
  return Array.isArray(value) && value.length === 2 && typeof value[0] === "number" && typeof value[1] === "string";
}

/**
 * Samples are checked where they are, not copied: a range answer holds up to 500 per series, and zod's
 * tuple copies each one (the benchmark's heap profile found that about 15 % of a worker's allocations).
 */
export const PrometheusSample = z.custom<PrometheusSample>(isSample, 'expected a sample [unix seconds, "value"]');
const PrometheusSamples = z.custom<PrometheusSample[]>(
  (value) => Array.isArray(value) && value.every(isSample),
  'expected an array of samples [unix seconds, "value"]',
);

export const PrometheusMatrixSeries = z.object({
  metric: Labels,
  // Absent for native-histogram-only series, which carry `histograms` instead.
  values: PrometheusSamples.default([]),
});
export type PrometheusMatrixSeries = z.infer<typeof PrometheusMatrixSeries>;

export const PrometheusVectorSample = z.object({
  metric: Labels,
  value: PrometheusSample.optional(),
});
export type PrometheusVectorSample = z.infer<typeof PrometheusVectorSample>;

/** Prometheus' `data` (`resultType` and `result`) as its HTTP API answers a query. */
export const PrometheusQueryData = z.discriminatedUnion("resultType", [
  z.object({ resultType: z.literal("matrix"), result: readOnce(PrometheusMatrixSeries) }),
  z.object({ resultType: z.literal("vector"), result: readOnce(PrometheusVectorSample) }),
  z.object({ resultType: z.literal("scalar"), result: PrometheusSample }),
  z.object({ resultType: z.literal("string"), result: PrometheusSample }),
]);
export type PrometheusQueryData = z.infer<typeof PrometheusQueryData>;

/**
 * A PromQL query's answer, and how the action reads it: its `unit`, and what it saturates against (a
 * `threshold`, or the range answer of its `limit` query with the limit's metric name).
 */
export const PrometheusObservation = z.object({
  kind: z.literal("prometheus"),
  data: PrometheusQueryData,
  unit: z.string().optional(),
  direction: z.enum(["up", "down"]).optional(),
  threshold: z.number().optional(),
  limit: z.object({ name: z.string(), result: readOnce(PrometheusMatrixSeries) }).optional(),
});
export type PrometheusObservation = z.infer<typeof PrometheusObservation>;

/** One series of a Datadog metric query's answer: `pointlist` holds `[milliseconds, value]`, value null for a gap. */
export const DatadogMetricSeries = z.object({
  pointlist: z.array(z.tuple([z.number(), z.number().nullable()])),
  /** The series' tags as `key:value` (or a bare tag): what tells the groups of a `by {…}` apart. */
  tag_set: z.array(z.string()).default([]),
  /** The tags the series was filtered and grouped on, comma-separated (`*` for none). */
  scope: z.string().default("*"),
});
export type DatadogMetricSeries = z.infer<typeof DatadogMetricSeries>;

/** A Datadog metric query's series, and the action's unit. */
export const DatadogMetricsObservation = z.object({
  kind: z.literal("datadog-metrics"),
  series: z.array(DatadogMetricSeries),
  unit: z.string().optional(),
});
export type DatadogMetricsObservation = z.infer<typeof DatadogMetricsObservation>;

/** A log line as its source gave it: when (epoch ms) and the line. */
export const ObservedLogLine = z.object({ at: z.number(), line: z.string() });
export type ObservedLogLine = z.infer<typeof ObservedLogLine>;

/**
 * A log search (Loki, Elasticsearch, Datadog): the latest lines of each phase, per stream with its labels
 * (one stream with none when the source has no streams), and how many lines matched per step of the
 * window (`at`: the start of the step, epoch ms).
 */
export const LogsObservation = z.object({
  kind: z.literal("logs"),
  streams: z.array(z.object({ labels: Labels.optional(), lines: z.array(ObservedLogLine) })),
  /** Absent in a hand-written bundle that has only lines: they are then every line there was. */
  counts: z.array(z.object({ at: z.number(), count: z.number() })).default([]),
});
export type LogsObservation = z.infer<typeof LogsObservation>;

/** A namespace's events, and the `name` the action narrows them to (an object of that name or named after it). */
export const KubernetesEventsObservation = z.object({ kind: z.literal("kubernetes-events"), items: z.array(KubernetesEvent), name: z.string().optional() });
export type KubernetesEventsObservation = z.infer<typeof KubernetesEventsObservation>;

/** A namespace's pods (by the action's selector), and the `name` the action narrows them to. */
export const KubernetesPodsObservation = z.object({ kind: z.literal("kubernetes-pods"), items: z.array(Pod), name: z.string().optional() });
export type KubernetesPodsObservation = z.infer<typeof KubernetesPodsObservation>;

/** Deployments and the ReplicaSets they may own (their revisions). */
export const KubernetesRolloutsObservation = z.object({
  kind: z.literal("kubernetes-rollouts"),
  deployments: z.array(Deployment),
  replicaSets: z.array(ReplicaSet),
});
export type KubernetesRolloutsObservation = z.infer<typeof KubernetesRolloutsObservation>;

/**
 * A namespace's state as the API server holds it at the read (kubernetes-objects.ts): what decides most
 * Kubernetes incidents (why a pod is Pending, waiting or restarting, why a Service reaches nothing, why
 * the API server refused a pod, whether nodes and their components are healthy).
 */
export const KubernetesStateObservation = KubernetesState.extend({ kind: z.literal("kubernetes-state") });
export type KubernetesStateObservation = z.infer<typeof KubernetesStateObservation>;

/** An alert of Alertmanager's `GET /api/v2/alerts` (`gettableAlert`), with the fields that are read. */
export const GettableAlert = z.object({
  labels: z.record(z.string(), z.string()),
  startsAt: z.iso.datetime({ offset: true }),
  endsAt: z.iso.datetime({ offset: true }),
});
export type GettableAlert = z.infer<typeof GettableAlert>;

/** A silence of `GET /api/v2/silences` (`gettableSilence`). */
export const GettableSilence = z.object({
  id: z.string(),
  startsAt: z.iso.datetime({ offset: true }),
  endsAt: z.iso.datetime({ offset: true }),
  createdBy: z.string(),
  comment: z.string(),
  status: z.object({ state: z.enum(["expired", "active", "pending"]) }),
});
export type GettableSilence = z.infer<typeof GettableSilence>;

/** The alerts Alertmanager holds for the action's matchers (it has no time filter), and the silences when asked. */
export const AlertmanagerObservation = z.object({
  kind: z.literal("alertmanager"),
  alerts: z.array(GettableAlert),
  silences: z.array(GettableSilence).optional(),
});
export type AlertmanagerObservation = z.infer<typeof AlertmanagerObservation>;

export const CHANGE_TYPES = ["deploy", "config", "restart"] as const;

/**
 * A JSON API's answer, and where the action reads it: `answerField` (a dotted path), and with `change`,
 * that the answer is a change at the time found at `change.timeField`, of `change.subject`.
 */
export const JsonObservation = z.object({
  kind: z.literal("json"),
  answer: z.unknown(),
  answerField: z.string(),
  change: z.object({ kind: z.enum(CHANGE_TYPES), timeField: z.string(), subject: z.string() }).optional(),
});
export type JsonObservation = z.infer<typeof JsonObservation>;

/** A short text the source answered, shown as it is. */
export const TextObservation = z.object({ kind: z.literal("text"), text: z.string() });
export type TextObservation = z.infer<typeof TextObservation>;

/**
 * Who calls whom among services (a service graph: Tempo's `traces_service_graph_request_total` by
 * `client` and `server`, a mesh's requests by source and destination workload, or as the team knows it):
 * each call once, `caller` and `callee` by the name the other actions' `service` labels give them. The
 * analysis reads it to tell where a slowdown begins and whose traffic only fell because a caller stalled.
 */
export const ServiceGraphObservation = z.object({
  kind: z.literal("service-graph"),
  calls: z.array(z.object({ caller: z.string().min(1), callee: z.string().min(1) })),
  /** Present when the source answered more calls than its connector keeps: the first `kept` of `of`. */
  truncated: z.object({ kept: z.int().nonnegative(), of: z.int().nonnegative() }).optional(),
});
export type ServiceGraphObservation = z.infer<typeof ServiceGraphObservation>;

/** The source gave no usable answer (or the query could not be built): why, in plain words. */
export const FailedObservation = z.object({
  kind: z.literal("failed"),
  reason: z.string(),
  /** The budget that stopped the action (execution-budget.ts), so that a replay judges it as the worker did. */
  budget: StoppingBudget.optional(),
});
export type FailedObservation = z.infer<typeof FailedObservation>;

/** Nothing was asked: the issue lacks the attributes the action's templates need. */
export const SkippedObservation = z.object({ kind: z.literal("skipped"), missing: z.array(z.string()) });
export type SkippedObservation = z.infer<typeof SkippedObservation>;

/** One action's observation, tagged by `kind`. */
export const Observation = z.discriminatedUnion("kind", [
  PrometheusObservation,
  DatadogMetricsObservation,
  LogsObservation,
  KubernetesEventsObservation,
  KubernetesPodsObservation,
  KubernetesRolloutsObservation,
  KubernetesStateObservation,
  AlertmanagerObservation,
  ServiceGraphObservation,
  JsonObservation,
  TextObservation,
  FailedObservation,
  SkippedObservation,
]);
export type Observation = z.infer<typeof Observation>;
