import { DatadogMetricSeries } from "@pes/contracts";
import { z } from "zod";

/** Datadog's error answer (any API, any status): `{"errors": ["Forbidden"]}`. */
export const DatadogErrors = z.object({ errors: z.array(z.string()).min(1) });

/**
 * The answer of `GET /api/v1/query`: `status` "ok" with its series, or "error" with `error` (a query
 * Datadog could not run may come back this way with HTTP 200).
 */
export const DatadogMetricsAnswer = z.object({
  status: z.string().optional(),
  error: z.string().optional(),
  series: z.array(DatadogMetricSeries).default([]),
});

/**
 * Where an answer of the logs APIs stands: `status` "timeout" (with `warnings`) when Datadog stopped before
 * it was done, so the counts or lines may be partial; `page.after`, the cursor of the next page of a search.
 */
const DatadogLogsMeta = z.object({
  status: z.string().optional(),
  page: z.object({ after: z.string().optional() }).optional(),
  warnings: z.array(z.object({ message: z.string().optional(), title: z.string().optional() })).optional(),
});

/**
 * One page of `POST /api/v2/logs/events/search`: the logs (`attributes.message` and `timestamp`, an ISO
 * time, among the log's other fields) and, when more match, the cursor of the next page.
 */
export const DatadogLogsPage = z.object({
  data: z.array(z.object({ attributes: z.object({ message: z.string().optional(), timestamp: z.string() }) })).default([]),
  meta: DatadogLogsMeta.optional(),
});
export type DatadogLogsPage = z.infer<typeof DatadogLogsPage>;

/**
 * The answer of `POST /api/v2/logs/analytics/aggregate` for one `count` timeseries without `group_by`: one
 * bucket (none when nothing matched) whose compute `c0` is the list of `{time, value}` points, `time` the
 * start of its interval as an ISO time.
 */
export const DatadogLogsAggregate = z.object({
  data: z
    .object({
      buckets: z.array(z.object({ computes: z.object({ c0: z.array(z.object({ time: z.string(), value: z.number() })) }) })).default([]),
    })
    .default({ buckets: [] }),
  meta: DatadogLogsMeta.optional(),
});
export type DatadogLogsAggregate = z.infer<typeof DatadogLogsAggregate>;
