import { z } from "zod";
import { connectionFields } from "../connection-options.js";
import { ApiKeyAuth, BasicAuth, BearerAuth } from "../http-auth.js";

/** Lines read per phase at most, like Loki's. */
export const MAX_ELASTICSEARCH_LINES = 5000;

/** An Elasticsearch (or OpenSearch) search API. */
export const ElasticsearchDataSource = z.strictObject({
  type: z.literal("elasticsearch"),
  url: z.url({ protocol: /^https?$/ }),
  ...connectionFields,
  /** Which one it is: the search API is the same, the links differ (Kibana's Discover or OpenSearch Dashboards'). */
  flavor: z.enum(["elasticsearch", "opensearch"]).default("elasticsearch"),
  /** When set, links open Discover (Kibana, or OpenSearch Dashboards) on this data view (index pattern) id. */
  kibana: z.strictObject({ url: z.url({ protocol: /^https?$/ }), dataViewId: z.string().min(1) }).optional(),
  auth: z.union([ApiKeyAuth, BearerAuth, BasicAuth]).optional(),
});
export type ElasticsearchDataSource = z.infer<typeof ElasticsearchDataSource>;

/**
 * A field name, literal: never a placeholder (which field a filter reads is the playbook's, not a value's).
 * Letters, digits and `_ @ . -`, as field names are written.
 */
const FieldName = z.string().regex(/^[A-Za-z0-9_@][A-Za-z0-9_.@-]*$/, "must be a field name (letters, digits, _ @ . -), not a template");

/**
 * The index (or pattern, or comma-separated list) the action searches, literal: it is a path segment of
 * the request, so no placeholder, no `/ ? #`, whitespace, and not `.` or `..`.
 */
const IndexName = z
  .string()
  .regex(/^[^\s/?#\\{}"<>|]+$/, 'must be a literal index or pattern (no placeholders, /, ?, #, whitespace, \\, ", <, >, |)')
  .refine((index) => index !== "." && index !== "..", "must be an index or pattern, not a dot segment");

/**
 * One filter: the field equals `term` exactly (a `term` query, for keyword fields), or holds the words of
 * `phrase` in order (a `match_phrase` query, for text). Values are templates filled as JSON strings.
 */
export const ElasticsearchFilter = z.union([
  z.strictObject({ field: FieldName, term: z.string() }),
  z.strictObject({ field: FieldName, phrase: z.string().min(1) }),
]);
export type ElasticsearchFilter = z.infer<typeof ElasticsearchFilter>;

/**
 * One log search of a playbook action: the documents of `index` in the window that pass every filter,
 * counted per step and the latest `limit` of each phase read for patterns (their `messageField`).
 */
export const ElasticsearchAction = z.strictObject({
  index: IndexName,
  timeField: FieldName.default("@timestamp"),
  messageField: FieldName.default("message"),
  filters: z.array(ElasticsearchFilter).max(20).default([]),
  limit: z.number().int().min(1).max(MAX_ELASTICSEARCH_LINES).default(1000),
});
export type ElasticsearchAction = z.infer<typeof ElasticsearchAction>;
