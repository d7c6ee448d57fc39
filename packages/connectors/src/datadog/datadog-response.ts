import { z } from "zod";

/** Datadog's error answer (any API, any status): `{"errors": ["Forbidden"]}`. */
export const DatadogErrors = z.object({ errors: z.array(z.string()).min(1) });

/** One series of a metric query's answer: `pointlist` holds `[milliseconds, value]`, value null for a gap. */
export const DatadogMetricSeries = z.object({
  pointlist: z.array(z.tuple([z.number(), z.number().nullable()])),
  /** The series' tags as `key:value` (or a bare tag): what tells the groups of a `by {…}` apart. */
  tag_set: z.array(z.string()).default([]),
  /** The tags the series was filtered and grouped on, comma-separated (`*` for none). */
  scope: z.string().default("*"),
});
export type DatadogMetricSeries = z.infer<typeof DatadogMetricSeries>;

/**
 * The answer of `GET /api/v1/query`: `status` "ok" with its series, or "error" with `error` (a query
 * Datadog could not run may come back this way with HTTP 200).
 */
export const DatadogMetricsAnswer = z.object({
  status: z.string().optional(),
  error: z.string().optional(),
  series: z.array(DatadogMetricSeries).default([]),
});
