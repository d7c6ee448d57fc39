import { fillTemplate } from "@pes/templates";
import { z } from "zod";
import { connectionFields } from "../connection-options.js";
import { defineConnector, type TemplateEncoding } from "../connector-definition.js";
import { SecretRef } from "../secret-ref.js";
import { datadogMetricsLink } from "./datadog-link.js";
import { datadogTagEncoder } from "./datadog-escape.js";

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
  /** Sent as DD-APPLICATION-KEY: the key's scopes must allow reading metrics (`timeseries_query`). */
  appKey: SecretRef,
});
export type DatadogDataSource = z.infer<typeof DatadogDataSource>;

/**
 * A metric query over the window (`avg:trace.http.request.duration{service:{{service}}}`), compared with
 * the level before the issue like a Prometheus range query. `{{name}}` is a tag value: written as it is
 * when it is one (letters, digits, `_ - : . /`), refused otherwise.
 */
export const DatadogAction = z.strictObject({
  metrics: z.string().min(1),
  /** How values read: `s`, `ms`, `bytes`, `percent`, `ratio` (shown as %), or any short suffix such as `req/s`. */
  unit: z.string().max(16).optional(),
});
export type DatadogAction = z.infer<typeof DatadogAction>;

/** Datadog metric queries: each value a tag value, or refused. */
export const datadogMetricsTemplate: TemplateEncoding = {
  target: "datadog metrics",
  fill: (template, attributes) => fillTemplate(template, attributes, datadogTagEncoder),
};

/** The datadog connector: a metric query over the window, compared with the level before the issue. */
export const datadogConnector = defineConnector({
  type: "datadog",
  noun: "a Datadog data source",
  builds: "query",
  dataSource: DatadogDataSource,
  query: DatadogAction,
  templates: [{ path: ["metrics"], encoding: datadogMetricsTemplate }],
  link: (dataSource, query, window) => datadogMetricsLink(dataSource, query.metrics, window),
  runtime: async () => (await import("./runtime.js")).datadogRuntime,
});
