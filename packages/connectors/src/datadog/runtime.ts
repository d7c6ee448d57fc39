import { analyzeSeries, type Evidence, type MetricContext, type Series } from "@pes/analysis";
import type { ActionRequest, ConnectorRuntime, FetchRequest } from "../connector.js";
import { runConnectorAction } from "../run-action.js";
import { fetchLogs } from "./datadog-logs.js";
import { askDatadog, failedWith, TARGET } from "./datadog-request.js";
import { DatadogMetricsAnswer, type DatadogMetricSeries } from "./datadog-response.js";
import { datadogConnector, type DatadogAction, type DatadogDataSource, type DatadogMetricsAction } from "./schema.js";

/**
 * A metric query: asks Datadog's metrics query API for the window and compares each series with its level
 * before the issue (`analyzeSeries`, as for Prometheus). A log search: counts and lines compared pattern by
 * pattern (`analyzeLogs`, as for Loki). Any failure is a `failed` evidence in plain words.
 */
export const datadogRuntime: ConnectorRuntime<DatadogDataSource, DatadogAction> = {
  fetch: ({ query, ...request }) => ("logs" in query ? fetchLogs({ ...request, query }) : fetchMetrics({ ...request, query })),
};

async function fetchMetrics(request: FetchRequest<DatadogDataSource, DatadogMetricsAction>): Promise<Evidence> {
  const { title, query: action, window, link } = request;
  const failed = failedWith(title, link);
  const params = new URLSearchParams({
    from: String(Math.floor(window.start.getTime() / 1000)),
    to: String(Math.ceil(window.end.getTime() / 1000)),
    query: action.metrics,
  });
  const answer = await askDatadog(request, `/api/v1/query?${params.toString()}`);
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

/**
 * Runs one Datadog action: fills the query (values checked for the query language), then fetches.
 * The worker runs actions through the registry; this is the same path, for this connector's own tests.
 */
export function runDatadogAction(request: ActionRequest<DatadogDataSource, DatadogAction>) {
  return runConnectorAction(datadogConnector.definition, datadogRuntime, request);
}
