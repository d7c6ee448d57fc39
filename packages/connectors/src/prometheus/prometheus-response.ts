import { z } from "zod";

/** `[unix seconds, "value"]`: Prometheus writes sample values as strings ("NaN", "+Inf" included). */
export const PrometheusSample = z.tuple([z.number(), z.string()]);
export type PrometheusSample = z.infer<typeof PrometheusSample>;

const Labels = z.record(z.string(), z.string());

export const PrometheusMatrixSeries = z.object({
  metric: Labels,
  // Absent for native-histogram-only series, which carry `histograms` instead.
  values: z.array(PrometheusSample).default([]),
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
