import { fillTemplate } from "@pes/templates";
import { z } from "zod";
import { connectionFields } from "../connection-options.js";
import { defineConnector, type TemplateEncoding } from "../connector-definition.js";
import { SecretRef } from "../secret-ref.js";
import { prometheusLink } from "./prometheus-link.js";
import { promqlEncoder } from "./promql-escape.js";

/** A Prometheus (or Prometheus-compatible: Thanos, Mimir, VictoriaMetrics) HTTP API. */
export const PrometheusDataSource = z.strictObject({
  type: z.literal("prometheus"),
  url: z.url({ protocol: /^https?$/ }),
  ...connectionFields,
  /** When set, links go to Grafana Explore for this data source instead of the Prometheus graph UI. */
  grafana: z
    .strictObject({
      url: z.url({ protocol: /^https?$/ }),
      datasourceUid: z.string().min(1),
      orgId: z.number().int().positive().default(1),
    })
    .optional(),
  auth: z
    .union([
      z.strictObject({ bearerToken: SecretRef }),
      z.strictObject({ basic: z.strictObject({ username: z.string(), password: SecretRef }) }),
    ])
    .optional(),
});
export type PrometheusDataSource = z.infer<typeof PrometheusDataSource>;

/**
 * One PromQL query of a playbook action. `{{name}}` placeholders in `query` are replaced by the
 * attribute's value as a PromQL string literal (`{{name|regex}}`: regex-escaped, for `=~`), so write
 * `service={{service}}`, without quotes: a value can never change the query's structure.
 */
export const PrometheusAction = z.strictObject({
  query: z.string().min(1),
  /** Range query over the time window (default), or an instant query at the issue time. */
  range: z.boolean().default(true),
  /** How values read: `s`, `ms`, `bytes`, `percent`, `ratio` (shown as %), or any short suffix such as `req/s`. */
  unit: z.string().max(16).optional(),
});
export type PrometheusAction = z.infer<typeof PrometheusAction>;

/** PromQL: each value a string literal, `|regex` regex-escaped first. */
export const promqlTemplate: TemplateEncoding = {
  target: "promql",
  filters: { names: ["regex"], where: "prometheus queries" },
  fill: (template, attributes) => fillTemplate(template, attributes, promqlEncoder),
};

/** The prometheus connector: a PromQL query over the window, compared with the level before the issue. */
export const prometheusConnector = defineConnector({
  type: "prometheus",
  noun: "a Prometheus data source",
  builds: "query",
  dataSource: PrometheusDataSource,
  query: PrometheusAction,
  templates: [{ path: ["query"], encoding: promqlTemplate }],
  link: (dataSource, query, window) => prometheusLink(dataSource, query.query, window),
  runtime: async () => (await import("./runtime.js")).prometheusRuntime,
});
