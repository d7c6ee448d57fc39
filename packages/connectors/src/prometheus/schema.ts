import { fillTemplate } from "@pes/templates";
import { z } from "zod";
import { connectionFields } from "../connection-options.js";
import { GrafanaExplore } from "../grafana-explore.js";
import type { TemplateEncoding } from "../connector-definition.js";
import { BasicAuth, BearerAuth } from "../http-auth.js";
import { placeholderInLiteralProblem } from "../query-literals.js";
import { promqlEncoder } from "./promql-escape.js";

/** A Prometheus (or Prometheus-compatible: Thanos, Mimir, VictoriaMetrics) HTTP API. */
export const PrometheusDataSource = z.strictObject({
  type: z.literal("prometheus"),
  url: z.url({ protocol: /^https?$/ }),
  ...connectionFields,
  /** When set, links go to Grafana Explore for this data source instead of the Prometheus graph UI. */
  grafana: GrafanaExplore.optional(),
  auth: z.union([BearerAuth, BasicAuth]).optional(),
});
export type PrometheusDataSource = z.infer<typeof PrometheusDataSource>;

/**
 * A label name of a query's answer. Prometheus 3 takes any UTF-8 name (`service.name` from OpenTelemetry),
 * so only emptiness and length are checked; a name no series carries finds no call.
 */
const AnswerLabelName = z.string().min(1).max(128);

/**
 * The labels that name a call's two ends in a service-graph action's answer: Tempo's (and Grafana
 * Agent's, Alloy's) `traces_service_graph_request_total` names them `client` and `server`, the defaults;
 * Istio's `istio_requests_total` names them `source_workload` and `destination_workload`.
 */
export const ServiceGraphLabels = z
  .strictObject({
    caller: AnswerLabelName.default("client"),
    callee: AnswerLabelName.default("server"),
  })
  .refine((labels) => labels.caller !== labels.callee, { path: ["callee"], message: "the caller's and the callee's labels must differ" });
export type ServiceGraphLabels = z.infer<typeof ServiceGraphLabels>;

/** What a service-graph action cannot have: each reads the answer's values, and a service graph reads only its labels. */
const VALUE_FIELDS = ["unit", "limit", "threshold", "direction"] as const;

/**
 * One PromQL query of a playbook action. `{{name}}` placeholders in `query` (and `limit`) are replaced by
 * the attribute's value as a PromQL string literal (`{{name|regex}}`: regex-escaped, for `=~`), so write
 * `service={{service}}`, without quotes: a value can never change the query's structure.
 */
export const PrometheusAction = z
  .strictObject({
    query: z.string().min(1),
    /** Range query over the time window (default), or an instant query at the issue time. */
    range: z.boolean().default(true),
    /** How values read: `s`, `ms`, `bytes`, `percent`, `ratio` (shown as %), or any short suffix such as `req/s`. */
    unit: z.string().max(16).optional(),
    /**
     * A PromQL query for what the metric saturates against, e.g. `pg_settings_max_connections`: asked over
     * the same window; each series is judged against the limit series whose shared labels agree with its
     * own. At ≥ 95 % of it (`direction: down`: ≤ 5 %) the metric is saturated, which ranks above any move.
     */
    limit: z.string().min(1).optional(),
    /** A fixed level the metric saturates at: at or above it (`direction: down`: at or below it). */
    threshold: z.number().optional(),
    /**
     * Which way the metric saturates or goes in trouble: `up` (default with a limit or threshold) towards
     * its limit, `down` towards nothing (free space). Alone it says which way is trouble: an `up` metric
     * (errors, retransmissions) falling to zero is relief, never an outage.
     */
    direction: z.enum(["up", "down"]).optional(),
    /**
     * The answer is who calls whom: each series whose labels name both ends (`caller`, `callee`: the label
     * names) is a call, whatever its values. Range or instant query alike; an instant one is lighter.
     */
    serviceGraph: ServiceGraphLabels.optional(),
  })
  .superRefine((action, context) => {
    if (action.serviceGraph !== undefined) {
      for (const field of VALUE_FIELDS) {
        if (action[field] !== undefined) {
          context.addIssue({
            code: "custom",
            path: [field],
            message: `a service graph (serviceGraph) reads the answer's labels, not its values: leave out ${field}`,
          });
        }
      }
      return;
    }
    if (action.limit !== undefined && action.threshold !== undefined) {
      context.addIssue({ code: "custom", path: ["threshold"], message: "give a limit or a threshold, not both" });
    }
    if (!action.range && (action.limit !== undefined || action.threshold !== undefined)) {
      context.addIssue({ code: "custom", path: ["range"], message: "a limit or a threshold needs a range query (range: true)" });
    }
  });
export type PrometheusAction = z.infer<typeof PrometheusAction>;

/** PromQL: each value a string literal, `|regex` regex-escaped first. */
export const promqlTemplate: TemplateEncoding = {
  target: "promql",
  filters: { names: ["regex"], where: "prometheus queries" },
  problem: placeholderInLiteralProblem,
  fill: (template, attributes) => {
    const problem = placeholderInLiteralProblem(template);
    if (problem !== undefined) throw new Error(problem);
    return fillTemplate(template, attributes, promqlEncoder);
  },
};
