import { sendJson, startTestHttpServer, type TestHttpServer } from "./test-http-server.js";

/** One document the fake Elasticsearch serves: the index it is in and its source. */
export interface FakeDocument {
  index: string;
  /** Its fields, flat (`"log.level": "error"`) or nested (`{ log: { level: "error" } }`); times as ISO text or epoch ms. */
  source: Readonly<Record<string, unknown>>;
}

export interface FakeElasticsearchOptions {
  documents: readonly FakeDocument[];
}

/** A fake Elasticsearch: a real HTTP server, the requests it saw, and its close. */
export type FakeElasticsearch = TestHttpServer;

class SearchError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    reason: string,
  ) {
    super(reason);
  }
}

type Query = (source: Readonly<Record<string, unknown>>) => boolean;

/**
 * An Elasticsearch on 127.0.0.1 that answers `POST /<index>/_search` from in-memory documents, in
 * Elasticsearch's wire format (search API docs: `hits.total`, `hits.hits[]` with `_index`, `_id`,
 * `_source` and `sort`; `aggregations.<name>.buckets[]` with `key`, `key_as_string`, `doc_count`; errors as
 * `{ error: { root_cause, type, reason }, status }`). What it runs, for real:
 *
 * - the index: a name, a pattern with `*`, or a comma-separated list of them; a name that matches no
 *   index is a 404 `index_not_found_exception` (a pattern that matches none finds nothing);
 * - `query`: `bool.filter` (a list or one) of `range` (`gte`/`gt`/`lte`/`lt`, epoch milliseconds or ISO
 *   text), `term` (the field's value exactly; `field.keyword` reads `field`) and `match_phrase` (the words
 *   of the phrase in order among the field's words, ignoring case), and `match_all`; anything else is a
 *   400 `parsing_exception`;
 * - `sort` on one field (`asc`/`desc`), `size` (default 10), `_source` (a list of fields);
 * - `aggs` with one `date_histogram` (`field`, `fixed_interval` in s/m/h, `min_doc_count`,
 *   `extended_bounds`).
 */
export async function startFakeElasticsearch(options: FakeElasticsearchOptions): Promise<FakeElasticsearch> {
  const documents = options.documents.map((document, index) => ({ ...document, id: String(index + 1) }));
  return startTestHttpServer((request, response) => {
    const match = /^\/([^/]+)\/_search(?:\?.*)?$/.exec(request.url);
    if (request.method !== "POST" || match === null) {
      return sendJson(
        response,
        405,
        errorBody(405, "illegal_argument_exception", `this fake answers POST /<index>/_search only, not ${request.method} ${request.url}`),
      );
    }
    try {
      const body: unknown = request.body === "" ? {} : JSON.parse(request.body);
      sendJson(response, 200, search(documents, decodeURIComponent(match[1] ?? ""), asObject(body, "the body")));
    } catch (error) {
      if (error instanceof SearchError) return sendJson(response, error.status, errorBody(error.status, error.type, error.message));
      if (error instanceof SyntaxError)
        return sendJson(response, 400, errorBody(400, "parse_exception", `request body is required to be valid JSON: ${error.message}`));
      throw error;
    }
  });
}

function errorBody(status: number, type: string, reason: string): unknown {
  return { error: { root_cause: [{ type, reason }], type, reason }, status };
}

function search(documents: ReadonlyArray<FakeDocument & { id: string }>, indexPattern: string, body: Record<string, unknown>): unknown {
  const patterns = indexPattern.split(",");
  const indices = new Set(documents.map((document) => document.index));
  for (const pattern of patterns) {
    if (!pattern.includes("*") && !indices.has(pattern)) throw new SearchError(404, "index_not_found_exception", `no such index [${pattern}]`);
  }
  const inIndex = (index: string) => patterns.some((pattern) => new RegExp(`^${pattern.split("*").map(escapeRegExp).join(".*")}$`).test(index));
  const query = body.query === undefined ? () => true : compileQuery(body.query);
  let hits = documents.filter((document) => inIndex(document.index) && query(document.source));

  const aggregations = body.aggs ?? body.aggregations;
  const aggregated = aggregations === undefined ? undefined : aggregate(hits, asObject(aggregations, "aggs"));
  const sortField = sortOf(body.sort);
  if (sortField !== undefined) {
    hits = [...hits].sort((a, b) => {
      const difference = millis(fieldOf(a.source, sortField.field)) - millis(fieldOf(b.source, sortField.field));
      return sortField.order === "desc" ? -difference : difference;
    });
  }
  const size = typeof body.size === "number" ? body.size : 10;
  const fields = Array.isArray(body._source) ? body._source.filter((item): item is string => typeof item === "string") : undefined;
  return {
    took: 1,
    timed_out: false,
    _shards: { total: 1, successful: 1, skipped: 0, failed: 0 },
    hits: {
      ...(body.track_total_hits === false ? {} : { total: { value: hits.length, relation: "eq" } }),
      max_score: null,
      hits: hits.slice(0, size).map((hit) => ({
        _index: hit.index,
        _id: hit.id,
        _score: null,
        _source:
          fields === undefined
            ? hit.source
            : Object.fromEntries(fields.flatMap((field) => (fieldOf(hit.source, field) === undefined ? [] : [[field, fieldOf(hit.source, field)]]))),
        ...(sortField === undefined ? {} : { sort: [millis(fieldOf(hit.source, sortField.field))] }),
      })),
    },
    ...(aggregated === undefined ? {} : { aggregations: aggregated }),
  };
}

function compileQuery(query: unknown): Query {
  const clause = asObject(query, "query");
  const [kind, ...others] = Object.keys(clause);
  if (kind === undefined || others.length > 0) throw new SearchError(400, "parsing_exception", "[_na] query malformed, must start with start_object");
  const value = clause[kind];
  switch (kind) {
    case "match_all":
      return () => true;
    case "bool": {
      const bool = asObject(value, "bool");
      for (const key of Object.keys(bool)) {
        if (key !== "filter" && key !== "must") throw new SearchError(400, "parsing_exception", `[bool] query does not support [${key}] in this fake`);
      }
      const clauses = [bool.filter, bool.must].flatMap((item) => (item === undefined ? [] : Array.isArray(item) ? item : [item])).map(compileQuery);
      return (source) => clauses.every((test) => test(source));
    }
    case "range": {
      const [field, bounds] = single(value, "range");
      const { gte, gt, lte, lt } = asObject(bounds, `range.${field}`);
      return (source) => {
        const at = millis(fieldOf(source, field));
        return (
          (gte === undefined || at >= millis(gte)) &&
          (gt === undefined || at > millis(gt)) &&
          (lte === undefined || at <= millis(lte)) &&
          (lt === undefined || at < millis(lt))
        );
      };
    }
    case "term": {
      const [field, expected] = single(value, "term");
      const wanted = expected !== null && typeof expected === "object" && "value" in expected ? expected.value : expected;
      const name = field.endsWith(".keyword") ? field.slice(0, -".keyword".length) : field;
      return (source) => {
        const actual = fieldOf(source, name);
        return Array.isArray(actual) ? actual.includes(wanted) : actual === wanted;
      };
    }
    case "match_phrase": {
      const [field, phrase] = single(value, "match_phrase");
      const wanted = words(String(phrase !== null && typeof phrase === "object" && "query" in phrase ? phrase.query : phrase));
      return (source) => {
        const have = words(String(fieldOf(source, field) ?? ""));
        if (wanted.length === 0) return false;
        for (let index = 0; index + wanted.length <= have.length; index += 1) {
          if (wanted.every((word, offset) => have[index + offset] === word)) return true;
        }
        return false;
      };
    }
    default:
      throw new SearchError(400, "parsing_exception", `unknown query [${kind}]`);
  }
}

function aggregate(hits: ReadonlyArray<FakeDocument>, aggregations: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(aggregations).map(([name, definition]) => {
      const histogram = asObject(asObject(definition, name).date_histogram, `${name}.date_histogram`);
      const field = String(histogram.field);
      const interval = /^(\d+)(s|m|h)$/.exec(String(histogram.fixed_interval));
      if (interval === null)
        throw new SearchError(
          400,
          "illegal_argument_exception",
          `failed to parse setting [date_histogram.fixedInterval] with value [${String(histogram.fixed_interval)}]`,
        );
      const size = Number(interval[1]) * { s: 1000, m: 60_000, h: 3_600_000 }[interval[2] as "s" | "m" | "h"];
      const counts = new Map<number, number>();
      for (const hit of hits) {
        const key = Math.floor(millis(fieldOf(hit.source, field)) / size) * size;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      const bounds = histogram.extended_bounds === undefined ? undefined : asObject(histogram.extended_bounds, "extended_bounds");
      const keys = [...counts.keys()];
      if (bounds !== undefined) keys.push(Math.floor(millis(bounds.min) / size) * size, Math.floor(millis(bounds.max) / size) * size);
      const buckets = [];
      const minDocCount = typeof histogram.min_doc_count === "number" ? histogram.min_doc_count : 1;
      if (keys.length > 0) {
        for (let key = Math.min(...keys); key <= Math.max(...keys); key += size) {
          const count = counts.get(key) ?? 0;
          if (count >= minDocCount) buckets.push({ key_as_string: new Date(key).toISOString(), key, doc_count: count });
        }
      }
      return [name, { buckets }];
    }),
  );
}

function sortOf(sort: unknown): { field: string; order: string } | undefined {
  const first: unknown = Array.isArray(sort) ? sort[0] : sort;
  if (first === undefined) return undefined;
  if (typeof first === "string") return { field: first, order: "asc" };
  const [field, spec] = single(first, "sort");
  const order = typeof spec === "string" ? spec : String(asObject(spec, "sort").order ?? "asc");
  return { field, order };
}

/** A field by name: a flat key `a.b`, or the path a → b. */
function fieldOf(source: Readonly<Record<string, unknown>>, name: string): unknown {
  if (Object.hasOwn(source, name)) return source[name];
  let current: unknown = source;
  for (const step of name.split(".")) {
    if (current === null || typeof current !== "object" || !Object.hasOwn(current, step)) return undefined;
    current = (current as Record<string, unknown>)[step];
  }
  return current;
}

function millis(value: unknown): number {
  if (typeof value === "number") return value;
  if (typeof value === "string") return /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  return Number.NaN;
}

/** Lower-cased words, as the standard analyzer splits text. */
function words(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== "");
}

function single(value: unknown, where: string): [string, unknown] {
  const entries = Object.entries(asObject(value, where));
  const [first] = entries;
  if (first === undefined || entries.length > 1) throw new SearchError(400, "parsing_exception", `[${where}] query doesn't support multiple fields`);
  return first;
}

function asObject(value: unknown, where: string): Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new SearchError(400, "parsing_exception", `[${where}] must be an object`);
  return value as Record<string, unknown>;
}

function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|]/g, "\\$&");
}
