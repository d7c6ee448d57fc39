import { z } from "zod";

/** A hit of `_search`: its source and, when sorted by time, the time as epoch milliseconds. */
const Hit = z.object({
  _source: z.record(z.string(), z.unknown()).optional(),
  sort: z.array(z.unknown()).optional(),
});

/** A successful `_search` answer, as far as this connector reads it. */
export const SearchAnswer = z.object({
  hits: z.object({ hits: z.array(Hit) }),
  aggregations: z.object({ per_step: z.object({ buckets: z.array(z.object({ key: z.number(), doc_count: z.number() })) }) }).optional(),
});
export type SearchAnswer = z.infer<typeof SearchAnswer>;

const ErrorCause = z.object({ type: z.string(), reason: z.string().nullish() });

/** Elasticsearch's (and OpenSearch's) error answer: `{ error: { type, reason, root_cause }, status }`. */
export const SearchError = z.object({
  error: z.union([z.string(), ErrorCause.extend({ root_cause: z.array(ErrorCause).optional() })]),
});
