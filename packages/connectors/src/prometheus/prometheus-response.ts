import { z } from "zod";

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

const Labels = z.record(z.string(), z.string());

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

export const PrometheusQueryData = z.discriminatedUnion("resultType", [
  z.object({ resultType: z.literal("matrix"), result: z.array(PrometheusMatrixSeries) }),
  z.object({ resultType: z.literal("vector"), result: z.array(PrometheusVectorSample) }),
  z.object({ resultType: z.literal("scalar"), result: PrometheusSample }),
  z.object({ resultType: z.literal("string"), result: PrometheusSample }),
]);
export type PrometheusQueryData = z.infer<typeof PrometheusQueryData>;

/** The body of a successful `/api/v1/query` or `/api/v1/query_range`. */
export const PrometheusSuccess = z.object({
  status: z.literal("success"),
  data: PrometheusQueryData,
  warnings: z.array(z.string()).optional(),
});
export type PrometheusSuccess = z.infer<typeof PrometheusSuccess>;

/** The body Prometheus sends with 4xx/5xx answers it produced itself (bad_data, execution, timeout…). */
export const PrometheusFailure = z.object({
  status: z.literal("error"),
  errorType: z.string().default("error"),
  error: z.string().default(""),
});
export type PrometheusFailure = z.infer<typeof PrometheusFailure>;
