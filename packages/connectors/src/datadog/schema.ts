import { fillTemplate } from "@pes/templates";
import { z } from "zod";
import { connectionFields } from "../connection-options.js";
import type { TemplateEncoding } from "../connector-definition.js";
import { SecretRef } from "../secret-ref.js";
import { placeholderInLiteralProblem } from "../query-literals.js";
import { datadogSearchEncoder, datadogTagEncoder } from "./datadog-escape.js";

/**
 * A Datadog organization, reached through its site's API host (`https://api.datadoghq.eu`,
 * `https://api.us5.datadoghq.com`…): the site is the URL. Both keys are secrets by reference.
 */
export const DatadogDataSource = z.strictObject({
  type: z.literal("datadog"),
  url: z.url({ protocol: /^https?$/ }),
  ...connectionFields,
  /** The web app that links open; default: the site's, derived from `url` (`api.datadoghq.eu` → `app.datadoghq.eu`). */
  appUrl: z.url({ protocol: /^https?$/ }).optional(),
  /** Sent as DD-API-KEY. */
  apiKey: SecretRef,
  /** Sent as DD-APPLICATION-KEY: the key's scopes must allow reading metrics (`timeseries_query`) and logs (`logs_read_data`). */
  appKey: SecretRef,
});
export type DatadogDataSource = z.infer<typeof DatadogDataSource>;

/** Log lines read per phase (before the issue, around it) at most, like Loki's. */
export const MAX_DATADOG_LOG_LINES = 5000;

/**
 * A metric query over the window (`avg:trace.http.request.duration{service:{{service}}}`), compared with
 * the level before the issue like a Prometheus range query. `{{name}}` is a tag value: written as it is
 * when it is one (letters, digits, `_ - : . /`), refused otherwise.
 */
export const DatadogMetricsAction = z.strictObject({
  metrics: z.string().min(1),
  /** How values read: `s`, `ms`, `bytes`, `percent`, `ratio` (shown as %), or any short suffix such as `req/s`. */
  unit: z.string().max(16).optional(),
});
export type DatadogMetricsAction = z.infer<typeof DatadogMetricsAction>;

/**
 * A log search over the window (`service:{{service}} status:error`), in Datadog's log search syntax: the
 * matching lines are counted per step and the latest `limit` of each phase read for patterns, as for Loki.
 * `{{name}}` becomes one quoted sequence (exact match, `\` and `"` escaped), so write it without quotes.
 */
export const DatadogLogsAction = z.strictObject({
  logs: z.string().min(1),
  limit: z.number().int().min(1).max(MAX_DATADOG_LOG_LINES).default(1000),
});
export type DatadogLogsAction = z.infer<typeof DatadogLogsAction>;

/** One Datadog action: a metric query or a log search, never both. */
export const DatadogAction = z.union([DatadogMetricsAction, DatadogLogsAction]);
export type DatadogAction = z.infer<typeof DatadogAction>;

/** Datadog metric queries: each value a tag value, or refused. */
export const datadogMetricsTemplate: TemplateEncoding = {
  target: "datadog metrics",
  fill: (template, attributes) => fillTemplate(template, attributes, datadogTagEncoder),
};

/** Datadog log searches: each value a quoted sequence; a placeholder inside the author's quotes is refused at load. */
export const datadogLogsTemplate: TemplateEncoding = {
  target: "datadog logs",
  problem: (template) => placeholderInLiteralProblem(template, '"'),
  fill: (template, attributes) => {
    const problem = placeholderInLiteralProblem(template, '"');
    if (problem !== undefined) throw new Error(problem);
    return fillTemplate(template, attributes, datadogSearchEncoder);
  },
};
