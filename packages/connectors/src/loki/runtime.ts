import { errorMessage, incidentPhaseStart, logCountStepSeconds, type FailedObservation, type LogsObservation } from "@pes/contracts";
import type { ConnectorRuntime } from "../connector.js";
import { errorAnswerText } from "../answer-text.js";
import { describeFetchFailure } from "../fetch-failure.js";
import { answerText, MAX_RESPONSE_BYTES, type HttpClient } from "../http-client.js";
import { authorizationHeader } from "../http-auth.js";
import { baseUrlOf } from "../url-text.js";
import { LokiMatrix, LokiStreams } from "./loki-response.js";
import type { LokiAction, LokiDataSource } from "./schema.js";

const TARGET = "Loki";

/** Why one of the action's requests got no usable answer, in plain words. */
class LokiFailure {
  constructor(readonly reason: string) {}
}

/**
 * Asks Loki, in parallel, for the selector's line counts over the window (`sum(count_over_time(…))`, a
 * matrix) and the latest `limit` lines of each phase (before the incident phase, and from it on: newest
 * first), each stream's lines with its labels. Any failure is a `failed` observation in plain words, Loki's
 * own for an error answer ("Loki answered 400: parse error at line 1, col 12: …").
 */
export const lokiRuntime: ConnectorRuntime<LokiDataSource, LokiAction, LogsObservation> = {
  async fetch(request) {
    const { dataSource, query: action, window, signal, secrets } = request;
    const failed = (reason: string): FailedObservation => ({ kind: "failed", reason });

    let headers: Record<string, string>;
    try {
      headers = {
        accept: "application/json",
        ...authorizationHeader(dataSource.auth, secrets),
        ...(dataSource.tenant === undefined ? {} : { "x-scope-orgid": dataSource.tenant }),
      };
    } catch (error) {
      return failed(`cannot authenticate to ${TARGET}: ${errorMessage(error)}`);
    }
    const url = `${baseUrlOf(dataSource)}/loki/api/v1/query_range`;
    const ask = (parameters: Record<string, string>) => getJson(request.http, `${url}?${new URLSearchParams(parameters).toString()}`, headers, signal);
    const split = incidentPhaseStart(window);
    const step = logCountStepSeconds(window);
    // Aligned to the step, and one step later: a sample counts the step that ends at it.
    const countsFrom = (Math.floor(window.start.getTime() / 1000 / step) + 1) * step * 1000;
    // Loki's end is exclusive: the window's end is not (its last nanosecond is asked for too).
    const lines = (from: Date, to: Date, inclusive = false) =>
      ask({ query: action.selector, start: nanoseconds(from), end: nanoseconds(to, inclusive), limit: String(action.limit), direction: "backward" });

    const [counts, before, during] = await Promise.all([
      ask({
        query: `sum(count_over_time(${action.selector}[${step}s]))`,
        start: nanoseconds(new Date(countsFrom)),
        end: nanoseconds(new Date(window.end.getTime() + step * 1000)),
        step: String(step),
      }),
      lines(window.start, split),
      lines(split, window.end, true),
    ]);
    const totals = counts instanceof LokiFailure ? counts : totalsOf(counts, step);
    if (totals instanceof LokiFailure) return failed(totals.reason);
    const streams: LogsObservation["streams"] = [];
    for (const answer of [before, during]) {
      const found = answer instanceof LokiFailure ? answer : streamsOf(answer);
      if (found instanceof LokiFailure) return failed(found.reason);
      streams.push(...found);
    }
    return { kind: "logs", streams, counts: totals };
  },
};

/** One GET, its JSON answer or why there is none. */
async function getJson(http: HttpClient, url: string, headers: Record<string, string>, signal: AbortSignal): Promise<unknown> {
  let status: number;
  let statusText: string;
  let body: Buffer;
  try {
    ({ status, statusText, body } = await http.request(url, { method: "GET", headers, signal }));
  } catch (error) {
    return new LokiFailure(describeFetchFailure(error, signal, TARGET, MAX_RESPONSE_BYTES));
  }
  if (status < 200 || status > 299) {
    const said = errorAnswerText(body);
    return new LokiFailure(said === "" ? `${TARGET} answered HTTP ${status}${statusText ? ` ${statusText}` : ""}` : `${TARGET} answered ${status}: ${said}`);
  }
  try {
    return JSON.parse(answerText(body));
  } catch {
    return new LokiFailure(`${TARGET} answered with something that is not JSON`);
  }
}

/**
 * The counts of a `sum(count_over_time(…[step]))` matrix: one series (none when no line matched). A
 * sample at t counts the lines in (t − step, t]: its step starts at t − step.
 */
function totalsOf(body: unknown, step: number): LogsObservation["counts"] | LokiFailure {
  const parsed = LokiMatrix.safeParse(body);
  if (!parsed.success) return new LokiFailure(`${TARGET} answered the count query in a shape this connector does not know`);
  return parsed.data.data.result.flatMap((series) => series.values.map(([seconds, value]) => ({ at: (seconds - step) * 1000, count: Number(value) })));
}

/** Every stream of a log query's answer: its labels and its lines (at: epoch ms). */
function streamsOf(body: unknown): LogsObservation["streams"] | LokiFailure {
  const parsed = LokiStreams.safeParse(body);
  if (!parsed.success) return new LokiFailure(`${TARGET} answered the log query in a shape this connector does not know`);
  return parsed.data.data.result.map((stream) => ({
    ...(stream.stream === undefined ? {} : { labels: stream.stream }),
    lines: stream.values.map(([at, line]) => ({ at: Number(at) / 1e6, line })),
  }));
}

/** Loki's times: integer nanoseconds since the epoch (`through`: the last nanosecond of that millisecond). */
function nanoseconds(date: Date, through = false): string {
  return `${date.getTime()}${through ? "999999" : "000000"}`;
}
