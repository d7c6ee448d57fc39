import { z } from "zod";

/** `["<unix nanoseconds>", "<line>"]`, possibly followed by structured metadata (ignored). */
const LokiEntry = z.tuple([z.string(), z.string()], z.unknown());

/** A successful log query (`resultType: streams`) of `/loki/api/v1/query_range`. */
export const LokiStreams = z.object({
  status: z.literal("success"),
  data: z.object({
    resultType: z.literal("streams"),
    result: z.array(z.object({ stream: z.record(z.string(), z.string()).optional(), values: z.array(LokiEntry) })),
  }),
});
export type LokiStreams = z.infer<typeof LokiStreams>;

/** A successful metric query (`resultType: matrix`): `[unix seconds, "value"]` samples, as Prometheus writes them. */
export const LokiMatrix = z.object({
  status: z.literal("success"),
  data: z.object({
    resultType: z.literal("matrix"),
    result: z.array(z.object({ metric: z.record(z.string(), z.string()), values: z.array(z.tuple([z.number(), z.string()])) })),
  }),
});
export type LokiMatrix = z.infer<typeof LokiMatrix>;
