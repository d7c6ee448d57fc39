import {
  errorMessage,
  PrometheusMatrixSeries,
  PrometheusVectorSample,
  UnreadableObservationError,
  type FailedObservation,
  type PrometheusObservation,
  type PrometheusQueryData,
  type ServiceGraphObservation,
} from "@pes/contracts";
import type { z } from "zod";
import type { ConnectorRuntime, TimeWindow } from "../connector.js";
import { describeFetchFailure } from "../fetch-failure.js";
import { answerText, MAX_RESPONSE_BYTES, type HttpAnswer } from "../http-client.js";
import { authorizationHeader } from "../http-auth.js";
import { baseUrlOf } from "../url-text.js";
import { splitAnswer, type SplitAnswer } from "./prometheus-answer.js";
import { promqlMetricName } from "./promql-metric-name.js";
import { PrometheusFailure, PrometheusSuccess } from "./prometheus-response.js";
import type { PrometheusAction, PrometheusDataSource, ServiceGraphLabels } from "./schema.js";

const TARGET = "Prometheus";
/** Never finer than a typical scrape interval: finer steps only repeat the same samples. */
const MIN_STEP_SECONDS = 15;
/** At most this many points per series: enough to date a change to the minute, cheap to transfer. */
const MAX_POINTS = 500;
/**
 * Calls a service graph keeps at most, the first the answer gives: a mesh of several hundred services,
 * small in a bundle and quick for the ranking to walk. Past it the observation says how many there were.
 */
export const MAX_SERVICE_GRAPH_CALLS = 2_000;

/**
 * Asks Prometheus for the window (range query, default) or the issue time (instant query) and returns
 * its answer, with the action's unit and what it saturates against. With a `limit`, the limit query is
 * asked for the same window at the same time; a limit query that fails fails the action, saying so.
 * With `serviceGraph`, the answer's labels are read as who calls whom (a `service-graph` observation).
 * Any failure becomes a `failed` observation in plain words, never a throw.
 */
export const prometheusRuntime: ConnectorRuntime<PrometheusDataSource, PrometheusAction, PrometheusObservation | ServiceGraphObservation> = {
  async fetch(request) {
    const { dataSource, query: action, window, signal, secrets } = request;
    // A Prometheus-compatible endpoint may quote the request, Authorization header included, in its error
    // text: the engine redacts the data source's secrets from whatever is read from this.
    const failed = (reason: string): FailedObservation => ({ kind: "failed", reason });

    let headers: Record<string, string>;
    try {
      headers = { accept: "application/json", ...authorizationHeader(dataSource.auth, secrets) };
    } catch (error) {
      return failed(`cannot authenticate to ${TARGET}: ${errorMessage(error)}`);
    }
    const range = action.range;
    const url = `${baseUrlOf(dataSource)}/api/v1/${range ? "query_range" : "query"}`;
    const ask = async (query: string): Promise<HttpAnswer | string> => {
      const form = new URLSearchParams({ query, ...(range ? rangeParameters(window) : { time: unixSeconds(window.time) }) }).toString();
      try {
        return await request.http.request(url, {
          method: "POST",
          headers: { ...headers, "content-type": "application/x-www-form-urlencoded" },
          body: form,
          signal,
          // A query only reads: sent again when Prometheus is busy or restarting.
          idempotent: true,
        });
      } catch (error) {
        return describeFetchFailure(error, signal, TARGET, MAX_RESPONSE_BYTES);
      }
    };

    const [answer, limitAnswer] = await Promise.all([ask(action.query), action.limit === undefined ? undefined : ask(action.limit)]);
    if (typeof answer === "string") return failed(answer);
    let limit: PrometheusObservation["limit"];
    if (action.limit !== undefined && limitAnswer !== undefined) {
      const limits = typeof limitAnswer === "string" ? limitAnswer : readLimits(limitAnswer);
      if (typeof limits === "string") return failed(`limit query: ${limits}`);
      limit = { name: promqlMetricName(action.limit) ?? action.limit, result: limits };
    }
    const data = readData(answer);
    if (typeof data === "string") return failed(data);
    if (action.serviceGraph !== undefined) return readServiceGraph(data, action.serviceGraph);
    return {
      kind: "prometheus",
      data,
      ...(action.unit === undefined ? {} : { unit: action.unit }),
      ...(action.direction === undefined ? {} : { direction: action.direction }),
      ...(action.threshold === undefined ? {} : { threshold: action.threshold }),
      ...(limit === undefined ? {} : { limit }),
    };
  },
};

/**
 * Who calls whom, as the labels of the answer's series say: each distinct pair of a caller and a callee
 * once, in the order the answer gives them, the first MAX_SERVICE_GRAPH_CALLS kept. A series that lacks
 * either label (or has it empty) is not a call and is passed over; its values are never read. Label
 * values are data: they name services and never reach a query. An answer without a call is an empty
 * graph, not a failure (the analysis reads it as no graph); one that is not series fails the action.
 */
function readServiceGraph(data: PrometheusQueryData, labels: ServiceGraphLabels): ServiceGraphObservation | FailedObservation {
  if (data.resultType !== "matrix" && data.resultType !== "vector") {
    return { kind: "failed", reason: `${TARGET} answered a ${data.resultType}, not series whose labels name who calls whom` };
  }
  const calls: ServiceGraphObservation["calls"] = [];
  const seen = new Set<string>();
  try {
    for (const { metric } of data.result) {
      const caller = metric[labels.caller];
      const callee = metric[labels.callee];
      if (caller === undefined || caller === "" || callee === undefined || callee === "") continue;
      const key = JSON.stringify([caller, callee]);
      if (seen.has(key)) continue;
      seen.add(key);
      if (calls.length < MAX_SERVICE_GRAPH_CALLS) calls.push({ caller, callee });
    }
  } catch (error) {
    // Read now, unlike a metric answer: a series that is not one fails the action here.
    if (error instanceof UnreadableObservationError) return { kind: "failed", reason: error.message };
    throw error;
  }
  return { kind: "service-graph", calls, ...(seen.size > calls.length ? { truncated: { kept: calls.length, of: seen.size } } : {}) };
}

/**
 * A successful range or instant answer is read one series at a time (prometheus-answer.ts): its result
 * stays the answer's bytes until the analysis reads it. Any other answer (an error answer, a scalar,
 * something that is not JSON) is small: parsed whole, its data or what is wrong with it in plain words.
 */
function readData(answer: HttpAnswer): PrometheusQueryData | string {
  const split = isSuccess(answer) ? splitAnswer(answer.body) : undefined;
  const envelope = split === undefined ? undefined : parseOrUndefined(split.envelope);
  const success = split === undefined || isErrorStatus(envelope) ? undefined : PrometheusSuccess.safeParse(envelope);
  if (split !== undefined && success?.success === true) {
    switch (success.data.data.resultType) {
      case "matrix":
        return { resultType: "matrix", result: new SeriesReader(answer.body, split, PrometheusMatrixSeries, "") };
      case "vector":
        return { resultType: "vector", result: new SeriesReader(answer.body, split, PrometheusVectorSample, "") };
      default:
        break;
    }
  }
  return readWhole(answer);
}

/**
 * An answer that is not a range or instant answer read one series at a time (an error answer, a scalar,
 * something that is not JSON) is small: parsed whole, its data or what is wrong with it in plain words.
 */
function readWhole(answer: HttpAnswer): PrometheusQueryData | string {
  const { status, statusText } = answer;
  let body: unknown;
  try {
    body = JSON.parse(answerText(answer.body));
  } catch {
    return status >= 400 ? `${TARGET} answered HTTP ${status}${statusText ? ` ${statusText}` : ""}` : `${TARGET} answered with something that is not JSON`;
  }
  // Only an error body is parsed as one: a failed parse builds an error object, which costs more than the check.
  const failure = isErrorStatus(body) ? PrometheusFailure.safeParse(body) : undefined;
  if (failure?.success === true) {
    const { errorType, error } = failure.data;
    return `${TARGET} could not run the query (${errorType}): ${error}`;
  }
  if (status >= 400) return `${TARGET} answered HTTP ${status}${statusText ? ` ${statusText}` : ""}`;
  const success = PrometheusSuccess.safeParse(body);
  return success.success ? success.data.data : `${TARGET} answered in a shape this connector does not know`;
}

/** The series of a limit query's range answer, read when the analysis reaches them; what is wrong in plain words otherwise. */
function readLimits(answer: HttpAnswer): Iterable<PrometheusMatrixSeries> | string {
  const split = isSuccess(answer) ? splitAnswer(answer.body) : undefined;
  const envelope = split === undefined ? undefined : parseOrUndefined(split.envelope);
  if (split !== undefined && PrometheusSuccess.safeParse(envelope).data?.data.resultType === "matrix") {
    return new SeriesReader(answer.body, split, PrometheusMatrixSeries, "limit query: ");
  }
  const data = readWhole(answer);
  if (typeof data === "string") return data;
  return data.resultType === "matrix" ? data.result : `${TARGET} answered a ${data.resultType}, not series over the window`;
}

function isSuccess(answer: HttpAnswer): boolean {
  return answer.status >= 200 && answer.status < 300;
}

function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The elements of an answer's `data.result`, each parsed and checked when it is reached and garbage once
 * the reader has moved on: what the heap holds is one series, not the whole answer, whose bytes stay
 * outside it. Read again, it parses again. An element that is not JSON, or not a series, stops the
 * reading with an UnreadableObservationError, which the analysis makes a failed action. A bundle writes
 * it as the array it is (`toJSON`).
 */
class SeriesReader<T> implements Iterable<T> {
  constructor(
    private readonly body: Buffer,
    private readonly split: SplitAnswer,
    private readonly schema: z.ZodType<T>,
    /** What the failure's words start with (`limit query: `). */
    private readonly which: string,
  ) {}

  *[Symbol.iterator](): Generator<T> {
    for (const [start, end] of this.split.elements) {
      let json: unknown;
      try {
        json = JSON.parse(this.body.toString("utf8", start, end));
      } catch {
        throw new UnreadableObservationError(`${this.which}${TARGET} answered with something that is not JSON`);
      }
      const parsed = this.schema.safeParse(json);
      if (!parsed.success) throw new UnreadableObservationError(`${this.which}${TARGET} answered in a shape this connector does not know`);
      yield parsed.data;
    }
  }

  toJSON(): T[] {
    return [...this];
  }
}

/**
 * The step of a range query: the window in at most 500 points, as a multiple of 15 s and never below
 * 15 s. A window of an hour or more thus gets 240–500 points; a shorter one gets fewer, at 15 s.
 */
export function rangeStepSeconds(window: TimeWindow): number {
  const seconds = Math.max(0, (window.end.getTime() - window.start.getTime()) / 1000);
  return Math.max(MIN_STEP_SECONDS, Math.ceil(seconds / MAX_POINTS / MIN_STEP_SECONDS) * MIN_STEP_SECONDS);
}

function rangeParameters(window: TimeWindow): Record<string, string> {
  const step = rangeStepSeconds(window);
  // Aligning start to the step puts samples on the same instants for every alert of a burst.
  const start = Math.floor(window.start.getTime() / 1000 / step) * step;
  return { start: String(start), end: unixSeconds(window.end), step: String(step) };
}

function isErrorStatus(body: unknown): boolean {
  return typeof body === "object" && body !== null && "status" in body && body.status === "error";
}

function unixSeconds(date: Date): string {
  return String(date.getTime() / 1000);
}
