import { errorMessage, incidentPhaseStart, logCountStepSeconds, type FailedObservation, type LogsObservation, type ObservedLogLine } from "@pes/contracts";
import { errorAnswerText } from "../answer-text.js";
import { describeFetchFailure } from "../fetch-failure.js";
import type { ConnectorRuntime } from "../connector.js";
import { answerText, MAX_RESPONSE_BYTES, type HttpClient } from "../http-client.js";
import { authorizationHeader } from "../http-auth.js";
import { baseUrlOf } from "../url-text.js";
import { SearchAnswer, SearchError } from "./elasticsearch-response.js";
import type { ElasticsearchAction, ElasticsearchDataSource } from "./schema.js";

/** Why one search got no usable answer, in plain words. */
class SearchFailure {
  constructor(readonly reason: string) {}
}

/**
 * Searches, in parallel, for the action's documents per step over the window (a date histogram, size 0)
 * and for the latest `limit` of each phase (sorted by time, newest first): their messages as log lines.
 * Attribute values are only ever JSON strings of `term` and
 * `match_phrase` queries in a body built by JSON.stringify: no query syntax reads them. Any failure is a
 * `failed` observation in plain words ("Elasticsearch answered 400: parsing_exception: …").
 */
export const elasticsearchRuntime: ConnectorRuntime<ElasticsearchDataSource, ElasticsearchAction, LogsObservation> = {
  async fetch(request) {
    const { dataSource, query: action, window, signal, secrets } = request;
    const target = dataSource.flavor === "opensearch" ? "OpenSearch" : "Elasticsearch";
    const failed = (reason: string): FailedObservation => ({ kind: "failed", reason });

    let headers: Record<string, string>;
    try {
      headers = { accept: "application/json", "content-type": "application/json", ...authorizationHeader(dataSource.auth, secrets) };
    } catch (error) {
      return failed(`cannot authenticate to ${target}: ${errorMessage(error)}`);
    }
    const url = `${baseUrlOf(dataSource)}/${encodeURIComponent(action.index)}/_search`;
    const search = (body: object) => postSearch(request.http, url, headers, JSON.stringify(body), signal, target);
    const split = incidentPhaseStart(window).getTime();
    const step = logCountStepSeconds(window);
    const filters = action.filters.map((filter) =>
      "term" in filter ? { term: { [filter.field]: filter.term } } : { match_phrase: { [filter.field]: filter.phrase } },
    );
    const inRange = (range: Record<string, number>) => ({
      bool: { filter: [{ range: { [action.timeField]: { ...range, format: "epoch_millis" } } }, ...filters] },
    });
    const latest = (range: Record<string, number>) => ({
      size: action.limit,
      track_total_hits: false,
      sort: [{ [action.timeField]: { order: "desc" } }],
      _source: [action.messageField, action.timeField],
      query: inRange(range),
    });

    const [counts, before, during] = await Promise.all([
      search({
        size: 0,
        track_total_hits: true,
        query: inRange({ gte: window.start.getTime(), lte: window.end.getTime() }),
        aggs: {
          per_step: {
            date_histogram: {
              field: action.timeField,
              fixed_interval: `${step}s`,
              min_doc_count: 0,
              extended_bounds: { min: window.start.getTime(), max: window.end.getTime() },
            },
          },
        },
      }),
      search(latest({ gte: window.start.getTime(), lt: split })),
      search(latest({ gte: split, lte: window.end.getTime() })),
    ]);
    if (counts instanceof SearchFailure) return failed(counts.reason);
    const totals = (counts.aggregations?.per_step.buckets ?? []).map((bucket) => ({ at: bucket.key, count: bucket.doc_count }));
    const lines: ObservedLogLine[] = [];
    for (const answer of [before, during]) {
      if (answer instanceof SearchFailure) return failed(answer.reason);
      lines.push(...linesOf(answer, action));
    }
    return { kind: "logs", streams: [{ lines }], counts: totals };
  },
};

/** One `_search`: its answer, or why there is none. */
async function postSearch(
  http: HttpClient,
  url: string,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
  target: string,
): Promise<SearchAnswer | SearchFailure> {
  let status: number;
  let statusText: string;
  let bytes: Buffer;
  try {
    // _search only reads: sent again when the cluster is busy (429) or a node restarts (503).
    ({ status, statusText, body: bytes } = await http.request(url, { method: "POST", headers, body, signal, idempotent: true }));
  } catch (error) {
    return new SearchFailure(describeFetchFailure(error, signal, target, MAX_RESPONSE_BYTES));
  }
  if (status < 200 || status > 299) {
    const said = errorText(bytes);
    return new SearchFailure(said === "" ? `${target} answered HTTP ${status}${statusText ? ` ${statusText}` : ""}` : `${target} answered ${status}: ${said}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(answerText(bytes));
  } catch {
    return new SearchFailure(`${target} answered with something that is not JSON`);
  }
  const parsed = SearchAnswer.safeParse(json);
  return parsed.success ? parsed.data : new SearchFailure(`${target} answered in a shape this connector does not know`);
}

/**
 * An error answer's words: its first root cause (what actually failed: "all shards failed" is only the
 * envelope) as `type: reason`, else the error's own, else the text as it is.
 */
function errorText(bytes: Buffer): string {
  let json: unknown;
  try {
    json = JSON.parse(answerText(bytes));
  } catch {
    return errorAnswerText(bytes);
  }
  const parsed = SearchError.safeParse(json);
  if (!parsed.success) return errorAnswerText(bytes);
  const { error } = parsed.data;
  if (typeof error === "string") return errorAnswerText(Buffer.from(error));
  const cause = error.root_cause?.[0] ?? error;
  return errorAnswerText(Buffer.from(cause.reason ? `${cause.type}: ${cause.reason}` : cause.type));
}

/** The hits as log lines: the message field (flat `a.b` or nested), at the sort value (epoch ms) or the time field. */
function linesOf(answer: SearchAnswer, action: ElasticsearchAction): ObservedLogLine[] {
  return answer.hits.hits.flatMap((hit) => {
    const message = fieldOf(hit._source, action.messageField);
    const at = typeof hit.sort?.[0] === "number" ? new Date(hit.sort[0]) : timeOf(fieldOf(hit._source, action.timeField));
    if (message === undefined || at === undefined || Number.isNaN(at.getTime())) return [];
    return [{ at: at.getTime(), line: typeof message === "string" ? message : JSON.stringify(message) }];
  });
}

/** A field of a source by its name: a flat key `a.b`, or the path a → b. */
function fieldOf(source: Readonly<Record<string, unknown>> | undefined, name: string): unknown {
  if (source === undefined) return undefined;
  if (Object.hasOwn(source, name)) return source[name];
  let current: unknown = source;
  for (const step of name.split(".")) {
    if (current === null || typeof current !== "object" || !Object.hasOwn(current, step)) return undefined;
    current = (current as Record<string, unknown>)[step];
  }
  return current;
}

function timeOf(value: unknown): Date | undefined {
  if (typeof value === "number") return new Date(value);
  if (typeof value === "string") return new Date(value);
  return undefined;
}
