import { analyzeSeries, describeFetchFailure, type Evidence, type MetricContext, type Series } from "@pes/analysis";
import type { ActionRequest, ConnectorRuntime, FetchRequest } from "../connector.js";
import { answerText, MAX_RESPONSE_BYTES, type HttpAnswer } from "../http-client.js";
import { runConnectorAction } from "../run-action.js";
import { baseUrlOf } from "../url-text.js";
import { DatadogErrors, DatadogMetricsAnswer, type DatadogMetricSeries } from "./datadog-response.js";
import { datadogConnector, type DatadogAction, type DatadogDataSource } from "./schema.js";

const TARGET = "Datadog";

type DatadogRequest = FetchRequest<DatadogDataSource, DatadogAction>;

/**
 * Asks Datadog's metrics query API for the window and compares each series with its level before the
 * issue (`analyzeSeries`, as for Prometheus). Any failure is a `failed` evidence in plain words.
 */
export const datadogRuntime: ConnectorRuntime<DatadogDataSource, DatadogAction, Evidence> = {
  fetch: (request) => fetchMetrics(request),
};

async function fetchMetrics(request: DatadogRequest): Promise<Evidence> {
  const { title, query: action, window, link } = request;
  const failed = failedWith(title, link);
  const params = new URLSearchParams({
    from: String(Math.floor(window.start.getTime() / 1000)),
    to: String(Math.ceil(window.end.getTime() / 1000)),
    query: action.metrics,
  });
  const answer = await ask(request, `/api/v1/query?${params.toString()}`);
  if ("problem" in answer) return failed(answer.problem);
  const body = DatadogMetricsAnswer.safeParse(answer.body);
  if (!body.success) return failed(`${TARGET} answered in a shape this connector does not know`);
  if (body.data.status === "error") return failed(`${TARGET} could not run the query: ${body.data.error ?? "no reason given"}`);
  const context: MetricContext = {
    action: title,
    window,
    ...(action.unit === undefined ? {} : { unit: action.unit }),
    ...(link === undefined ? {} : { link }),
  };
  return analyzeSeries(body.data.series.map(seriesOf), context);
}

/**
 * Sends one request with the data source's keys and reads its JSON answer, or says why there is none
 * (no answer, an error answer, not JSON). Datadog's error answers are `{"errors": [...]}`.
 */
async function ask(request: DatadogRequest, path: string): Promise<{ body: unknown } | { problem: string }> {
  const { dataSource, secrets, signal } = request;
  let headers: Record<string, string>;
  try {
    headers = { accept: "application/json", "dd-api-key": secrets.value(dataSource.apiKey), "dd-application-key": secrets.value(dataSource.appKey) };
  } catch (error) {
    return { problem: `cannot authenticate to ${TARGET}: ${error instanceof Error ? error.message : String(error)}` };
  }
  let answer: HttpAnswer;
  try {
    answer = await request.http.request(`${baseUrlOf(dataSource)}${path}`, { method: "GET", headers, signal });
  } catch (error) {
    return { problem: describeFetchFailure(error, signal, TARGET, MAX_RESPONSE_BYTES) };
  }
  let body: unknown;
  try {
    body = JSON.parse(answerText(answer.body));
  } catch {
    return { problem: answer.status >= 400 ? `${TARGET} answered ${statusOf(answer)}` : `${TARGET} answered with something that is not JSON` };
  }
  if (answer.status < 400) return { body };
  const errors = DatadogErrors.safeParse(body);
  return { problem: `${TARGET} answered ${errors.success ? `${answer.status}: ${errors.data.errors.join("; ")}` : statusOf(answer)}` };
}

function statusOf(answer: HttpAnswer): string {
  return `${answer.status}${answer.statusText === "" ? "" : ` ${answer.statusText}`}`;
}

/** A series named by its tags (`service:checkout` → service=checkout); by its scope when it has none. */
function seriesOf(series: DatadogMetricSeries): Series {
  const tags = series.tag_set.length > 0 ? series.tag_set : series.scope === "*" ? [] : series.scope.split(",");
  return {
    labels: Object.fromEntries(tags.map(labelOf)),
    points: series.pointlist.map(([at, value]) => ({ at, value: value ?? Number.NaN })),
  };
}

/** `key:value` as a label; the key ends at the first colon (a value may hold more). A bare tag has an empty value. */
function labelOf(tag: string): [string, string] {
  const colon = tag.indexOf(":");
  return colon === -1 ? [tag, ""] : [tag.slice(0, colon), tag.slice(colon + 1)];
}

function failedWith(action: string, link: string | undefined): (reason: string) => Evidence {
  return (reason) => ({ kind: "failed", action, reason, ...(link === undefined ? {} : { link }) });
}

/**
 * Runs one Datadog action: fills the query (values checked for the query language), then fetches.
 * The worker runs actions through the registry; this is the same path, for this connector's own tests.
 */
export function runDatadogAction(request: ActionRequest<DatadogDataSource, DatadogAction>): Promise<Evidence> {
  return runConnectorAction(datadogConnector.definition, datadogRuntime, request);
}
