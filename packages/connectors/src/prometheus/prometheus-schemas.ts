import { z } from "zod";
import { SecretRef } from "../secret-ref.js";

/** A Prometheus (or Prometheus-compatible: Thanos, Mimir, VictoriaMetrics) HTTP API. */
export const PrometheusDataSource = z.strictObject({
  type: z.literal("prometheus"),
  url: z.url({ protocol: /^https?$/ }),
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
