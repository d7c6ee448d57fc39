import { fillTemplate, MissingAttributesError } from "@pes/templates";
import { actionOutcomes } from "../action-outcomes.js";
import type { ActionOutcome, Connector, TimeWindow } from "../connector.js";
import { sendHttpRequest } from "../http-client.js";
import { describeFetchFailure } from "../outcome-text.js";
import { basicCredential, readSecret } from "../secret-ref.js";
import { baseUrlOf } from "../url-text.js";
import { analyzeQueryData } from "./prometheus-analysis.js";
import { prometheusLink } from "./prometheus-link.js";
import { PrometheusFailure, PrometheusSuccess } from "./prometheus-response.js";
import type { PrometheusDataSource } from "./prometheus-schemas.js";
import { promqlEncoder } from "./promql-escape.js";

const TARGET = "Prometheus";
/** Never finer than a typical scrape interval: finer steps only repeat the same samples. */
const MIN_STEP_SECONDS = 15;
/** At most this many points per series: enough to date a change to the minute, cheap to transfer. */
const MAX_POINTS = 500;

/**
 * Runs one PromQL action: fills the query (attribute values as PromQL string literals), asks Prometheus
 * for the window (range query, default) or the issue time (instant query), and compares what it sees with
 * the level before the issue. Any failure becomes a `failed` outcome in plain words, never a throw.
 */
export const runPrometheusAction: Connector<"prometheus"> = async (request) => {
  const { title, dataSource, spec, attributes, window, signal } = request;
  const outcomes = actionOutcomes(request);
  let query: string;
  try {
    query = fillTemplate(spec.query, attributes, promqlEncoder);
  } catch (error) {
    if (error instanceof MissingAttributesError) return outcomes.skipped(error);
    return outcomes.failed(`could not build the query: ${messageOf(error)}`);
  }
  const mostImportantLink = prometheusLink(dataSource, query, window);
  // Every outcome goes through actionOutcomes, which redacts the data source's secrets: a Prometheus-compatible
  // endpoint may quote the request, Authorization header included, in its error text.
  const failed = (reason: string): ActionOutcome => outcomes.failed(reason, mostImportantLink);

  let headers: Record<string, string>;
  try {
    headers = { accept: "application/json", ...authorization(dataSource) };
  } catch (error) {
    return failed(`cannot authenticate to ${TARGET}: ${messageOf(error)}`);
  }
  const range = spec.range;
  const form = new URLSearchParams({ query, ...(range ? rangeParameters(window) : { time: unixSeconds(window.time) }) }).toString();
  const url = `${baseUrlOf(dataSource)}/api/v1/${range ? "query_range" : "query"}`;

  let status: number;
  let statusText: string;
  let text: string;
  try {
    ({ status, statusText, text } = await sendHttpRequest(url, {
      method: "POST",
      headers: { ...headers, "content-type": "application/x-www-form-urlencoded" },
      body: form,
      signal,
    }));
  } catch (error) {
    return failed(describeFetchFailure(error, signal, TARGET));
  }

  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return failed(
      status >= 400 ? `${TARGET} answered HTTP ${status}${statusText ? ` ${statusText}` : ""}` : `${TARGET} answered with something that is not JSON`,
    );
  }
  // Only an error body is parsed as one: a failed parse builds an error object, which costs more than the check.
  const failure = isErrorStatus(body) ? PrometheusFailure.safeParse(body) : undefined;
  if (failure?.success === true) {
    const { errorType, error } = failure.data;
    return failed(`${TARGET} could not run the query (${errorType}): ${error}`);
  }
  if (status >= 400) return failed(`${TARGET} answered HTTP ${status}${statusText ? ` ${statusText}` : ""}`);
  const success = PrometheusSuccess.safeParse(body);
  if (!success.success) return failed(`${TARGET} answered in a shape this connector does not know`);

  const analysis = analyzeQueryData(success.data.data, {
    title,
    window,
    ...(spec.unit === undefined ? {} : { unit: spec.unit }),
  });
  return outcomes.answered({ ...analysis, mostImportantLink });
};

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

function authorization(dataSource: PrometheusDataSource): Record<string, string> {
  const auth = dataSource.auth;
  if (auth === undefined) return {};
  if ("bearerToken" in auth) return { authorization: `Bearer ${readSecret(auth.bearerToken)}` };
  return { authorization: `Basic ${basicCredential(auth.basic.username, readSecret(auth.basic.password))}` };
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
