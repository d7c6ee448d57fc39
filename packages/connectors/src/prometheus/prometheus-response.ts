import { PrometheusQueryData } from "@pes/contracts";
import { z } from "zod";

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
