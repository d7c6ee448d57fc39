import {
  analyzeInstant,
  analyzeSeries,
  compactLimit,
  describeFetchFailure,
  type Evidence,
  type InstantValue,
  type LimitSeries,
  type MetricContext,
  type SaturationRule,
  type Series,
} from "@pes/analysis";
import type { z } from "zod";
import type { ActionRequest, ConnectorRuntime, TimeWindow } from "../connector.js";
import { answerText, MAX_RESPONSE_BYTES, type HttpAnswer } from "../http-client.js";
import { authorizationHeader } from "../http-auth.js";
import { runConnectorAction } from "../run-action.js";
import { baseUrlOf } from "../url-text.js";
import { splitAnswer, type SplitAnswer } from "./prometheus-answer.js";
import { promqlMetricName } from "./promql-metric-name.js";
import {
  PrometheusFailure,
  PrometheusMatrixSeries,
  PrometheusSuccess,
  PrometheusVectorSample,
  type PrometheusQueryData,
} from "./prometheus-response.js";
import { prometheusConnector, type PrometheusAction, type PrometheusDataSource } from "./schema.js";

const TARGET = "Prometheus";
/** Never finer than a typical scrape interval: finer steps only repeat the same samples. */
const MIN_STEP_SECONDS = 15;
/** At most this many points per series: enough to date a change to the minute, cheap to transfer. */
const MAX_POINTS = 500;

/**
 * Asks Prometheus for the window (range query, default) or the issue time (instant query) and returns
 * its answer as evidence: a range compared with the level before the issue (`analyzeSeries`), instant
 * values as they are. With a `limit`, the limit query is asked for the same window at the same time, and
 * each series is also judged against its limit; a limit query that fails fails the action, saying so.
 * Any failure becomes a `failed` evidence in plain words, never a throw.
 */
export const prometheusRuntime: ConnectorRuntime<PrometheusDataSource, PrometheusAction, Evidence> = {
  async fetch(request) {
    const { title, dataSource, query: action, window, signal, secrets, link } = request;
    // A Prometheus-compatible endpoint may quote the request, Authorization header included, in its error
    // text: the runner redacts the data source's secrets from whatever this returns.
    const failed = (reason: string): Evidence => ({ kind: "failed", action: title, reason, ...(link === undefined ? {} : { link }) });

    let headers: Record<string, string>;
    try {
      headers = { accept: "application/json", ...authorizationHeader(dataSource.auth, secrets) };
    } catch (error) {
      return failed(`cannot authenticate to ${TARGET}: ${messageOf(error)}`);
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
    const direction = action.direction ?? "up";
    let saturation: SaturationRule | undefined = action.threshold === undefined ? undefined : { direction, threshold: action.threshold };
    if (action.limit !== undefined && limitAnswer !== undefined) {
      const limits = typeof limitAnswer === "string" ? limitAnswer : readLimits(limitAnswer);
      if (typeof limits === "string") return failed(`limit query: ${limits}`);
      saturation = { direction, limits, name: promqlMetricName(action.limit) ?? action.limit };
    }
    const context: MetricContext = {
      action: title,
      window,
      ...(action.unit === undefined ? {} : { unit: action.unit }),
      ...(link === undefined ? {} : { link }),
      ...(saturation === undefined ? {} : { saturation }),
    };

    // A successful range or instant answer is read one series at a time (prometheus-answer.ts).
    const bySeries = isSuccess(answer) ? analyzeBySeries(answer.body, context) : undefined;
    if (bySeries === NOT_JSON) return failed(`${TARGET} answered with something that is not JSON`);
    if (bySeries === UNKNOWN_SHAPE) return failed(`${TARGET} answered in a shape this connector does not know`);
    if (bySeries !== undefined) return bySeries;
    const data = readWhole(answer);
    return typeof data === "string" ? failed(data) : evidenceOf(data, context);
  },
};

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

/**
 * The series of a limit query's range answer, each reduced to its changes as it is read (a limit rarely
 * moves, so the window costs one entry per series); what is wrong in plain words otherwise.
 */
function readLimits(answer: HttpAnswer): LimitSeries[] | string {
  const split = isSuccess(answer) ? splitAnswer(answer.body) : undefined;
  const envelope = split === undefined ? undefined : parseOrUndefined(split.envelope);
  if (split !== undefined && PrometheusSuccess.safeParse(envelope).data?.data.resultType === "matrix") {
    try {
      return Array.from(elementsOf(answer.body, split, PrometheusMatrixSeries), (series) => compactLimit(seriesOf(series)));
    } catch (error) {
      if (error instanceof SyntaxError) return `${TARGET} answered with something that is not JSON`;
      if (error instanceof UnknownShapeError) return `${TARGET} answered in a shape this connector does not know`;
      throw error;
    }
  }
  const data = readWhole(answer);
  if (typeof data === "string") return data;
  return data.resultType === "matrix" ? data.result.map((series) => compactLimit(seriesOf(series))) : `${TARGET} answered a ${data.resultType}, not series over the window`;
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

/** A query's answer as evidence: a matrix compared with its baseline, instant values and scalars as they are. */
function evidenceOf(data: PrometheusQueryData, context: MetricContext): Evidence {
  switch (data.resultType) {
    case "matrix":
      return analyzeSeries(data.result.map(seriesOf), context);
    case "vector":
      return analyzeInstant(data.result.flatMap(instantValueOf), context);
    case "scalar":
      return analyzeInstant([{ labels: {}, value: sampleValue(data.result[1]) }], context);
    case "string":
      return { kind: "answer", action: context.action, text: data.result[1], ...(context.link === undefined ? {} : { link: context.link }) };
  }
}

function seriesOf(series: PrometheusMatrixSeries): Series {
  return { labels: series.metric, points: series.values.map(([seconds, value]) => ({ at: seconds * 1000, value: sampleValue(value) })) };
}

/** A vector sample's value; none for a sample without one (a native-histogram-only series). */
function instantValueOf(sample: PrometheusVectorSample): InstantValue[] {
  return sample.value === undefined ? [] : [{ labels: sample.metric, value: sampleValue(sample.value[1]) }];
}

/** A sample's value: Prometheus writes "+Inf" and "-Inf", which Number() reads as NaN. */
function sampleValue(text: string): number {
  if (text === "+Inf") return Infinity;
  if (text === "-Inf") return -Infinity;
  return Number(text);
}

const NOT_JSON = Symbol("not JSON");
const UNKNOWN_SHAPE = Symbol("unknown shape");

/** A series (or a vector sample) of the answer that does not have the shape Prometheus gives it. */
class UnknownShapeError extends Error {}

/**
 * Analyzes a successful matrix or vector answer one series at a time: each element of `data.result` is
 * parsed and checked when the analysis reaches it, and is garbage once it has moved on, so what the
 * heap holds is one series and the findings, not the whole answer. Undefined when the answer is not
 * such an answer (the caller parses it whole).
 */
function analyzeBySeries(body: Buffer, context: MetricContext): Evidence | typeof NOT_JSON | typeof UNKNOWN_SHAPE | undefined {
  const split = splitAnswer(body);
  if (split === undefined) return undefined;
  const envelope = parseOrUndefined(split.envelope);
  const success = isErrorStatus(envelope) ? undefined : PrometheusSuccess.safeParse(envelope);
  if (success?.success !== true) return undefined;
  try {
    switch (success.data.data.resultType) {
      case "matrix":
        return analyzeSeries(mapped(elementsOf(body, split, PrometheusMatrixSeries), seriesOf), context);
      case "vector":
        // One sample per series: small even when there are many, and its analysis sorts them.
        return analyzeInstant([...elementsOf(body, split, PrometheusVectorSample)].flatMap(instantValueOf), context);
      default:
        return undefined;
    }
  } catch (error) {
    if (error instanceof SyntaxError) return NOT_JSON;
    if (error instanceof UnknownShapeError) return UNKNOWN_SHAPE;
    throw error;
  }
}

/** Each item as `map` makes it, when it is reached: a series is converted only when the analysis gets to it. */
function* mapped<T, U>(items: Iterable<T>, map: (item: T) => U): Generator<U> {
  for (const item of items) yield map(item);
}

function* elementsOf<T>(body: Buffer, split: SplitAnswer, schema: z.ZodType<T>): Generator<T> {
  for (const [start, end] of split.elements) {
    const parsed = schema.safeParse(JSON.parse(body.toString("utf8", start, end)));
    if (!parsed.success) throw new UnknownShapeError();
    yield parsed.data;
  }
}

/**
 * Runs one PromQL action: fills the query (attribute values as PromQL string literals), then fetches.
 * The worker runs actions through the registry; this is the same path, for this connector's own tests.
 */
export function runPrometheusAction(request: ActionRequest<PrometheusDataSource, PrometheusAction>): Promise<Evidence> {
  return runConnectorAction(prometheusConnector.definition, prometheusRuntime, request);
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

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
