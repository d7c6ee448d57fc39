import { incidentPhaseStart, logCountStepSeconds, type FailedObservation, type LogsObservation, type ObservedLogLine } from "@pes/contracts";
import type { FetchRequest } from "../connector.js";
import { askDatadog, TARGET } from "./datadog-request.js";
import { DatadogLogsAggregate, DatadogLogsPage } from "./datadog-response.js";
import type { DatadogDataSource, DatadogLogsAction } from "./schema.js";

/**
 * Logs asked for per search page at most: Datadog allows 5000, but each log comes with all its attributes,
 * so smaller pages keep every answer far below the response size cap; the cursor reads on.
 */
const PAGE_SIZE = 1000;

type LogsRequest = FetchRequest<DatadogDataSource, DatadogLogsAction>;

/** Why one of the action's requests got no usable answer, in plain words. */
class LogsFailure {
  constructor(readonly reason: string) {}
}

/**
 * Asks Datadog, in parallel, for the search's line counts per step over the window (the aggregate API, a
 * `count` timeseries) and the latest `limit` lines of each phase (the search API, newest first, page after
 * page), as for Loki. Attribute values are quoted sequences of the search (datadog-escape.ts), which is a
 * JSON string of a body built by JSON.stringify. Any failure is a `failed` observation in plain words
 * ("Datadog answered 400: …").
 */
export async function fetchLogs(request: LogsRequest): Promise<LogsObservation | FailedObservation> {
  const { window } = request;
  const split = incidentPhaseStart(window);
  const [totals, before, during] = await Promise.all([countsOf(request), latestLines(request, window.start, split), latestLines(request, split, window.end)]);
  if (totals instanceof LogsFailure) return { kind: "failed", reason: totals.reason };
  if (before instanceof LogsFailure) return { kind: "failed", reason: before.reason };
  if (during instanceof LogsFailure) return { kind: "failed", reason: during.reason };
  return { kind: "logs", streams: [{ lines: [...before, ...during] }], counts: totals };
}

/** Matching lines per step over the window: a `count` timeseries without groups, one point per step. */
async function countsOf(request: LogsRequest): Promise<LogsObservation["counts"] | LogsFailure> {
  const { query: action, window } = request;
  const step = logCountStepSeconds(window);
  const answer = await askDatadog(request, "/api/v2/logs/analytics/aggregate", {
    compute: [{ aggregation: "count", type: "timeseries", interval: `${step / 60}m` }],
    filter: { query: action.logs, from: String(window.start.getTime()), to: String(window.end.getTime()) },
  });
  if ("problem" in answer) return new LogsFailure(answer.problem);
  const parsed = DatadogLogsAggregate.safeParse(answer.body);
  if (!parsed.success) return new LogsFailure(`${TARGET} answered the count in a shape this connector does not know`);
  const unfinished = unfinishedReason(parsed.data.meta);
  if (unfinished !== undefined) return new LogsFailure(`${TARGET} could not finish counting the lines: ${unfinished}`);
  return parsed.data.data.buckets.flatMap((bucket) => bucket.computes.c0.map((point) => ({ at: Date.parse(point.time), count: point.value })));
}

/**
 * The latest `limit` lines in [from, to), newest first, following the search's cursor page after page. A
 * log without a message has no line to group and is left out.
 */
async function latestLines(request: LogsRequest, from: Date, to: Date): Promise<ObservedLogLine[] | LogsFailure> {
  const { query: action } = request;
  const lines: ObservedLogLine[] = [];
  let read = 0;
  let cursor: string | undefined;
  do {
    const answer = await askDatadog(request, "/api/v2/logs/events/search", {
      filter: { query: action.logs, from: String(from.getTime()), to: String(to.getTime()) },
      sort: "-timestamp",
      page: { limit: Math.min(PAGE_SIZE, action.limit - read), ...(cursor === undefined ? {} : { cursor }) },
    });
    if ("problem" in answer) return new LogsFailure(answer.problem);
    const parsed = DatadogLogsPage.safeParse(answer.body);
    if (!parsed.success) return new LogsFailure(`${TARGET} answered the log search in a shape this connector does not know`);
    const unfinished = unfinishedReason(parsed.data.meta);
    if (unfinished !== undefined) return new LogsFailure(`${TARGET} could not finish the log search: ${unfinished}`);
    read += parsed.data.data.length;
    for (const { attributes } of parsed.data.data) {
      const at = Date.parse(attributes.timestamp);
      if (attributes.message !== undefined && !Number.isNaN(at)) lines.push({ at, line: attributes.message });
    }
    cursor = parsed.data.data.length === 0 ? undefined : parsed.data.meta?.page?.after;
  } while (cursor !== undefined && read < action.limit);
  return lines;
}

/**
 * Why an answer is partial, if it is: Datadog's `status: "timeout"`, with its first warning's words.
 * Partial counts would read as a drop, so they are not analyzed.
 */
function unfinishedReason(meta: DatadogLogsPage["meta"]): string | undefined {
  if (meta?.status !== "timeout") return undefined;
  const warning = meta.warnings?.[0];
  return warning?.message ?? warning?.title ?? "it timed out";
}
