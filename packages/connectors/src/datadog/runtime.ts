import type { DatadogMetricsObservation, FailedObservation } from "@pes/contracts";
import type { ConnectorRuntime, FetchRequest } from "../connector.js";
import { fetchLogs } from "./datadog-logs.js";
import { askDatadog, TARGET } from "./datadog-request.js";
import { DatadogMetricsAnswer } from "./datadog-response.js";
import type { DatadogAction, DatadogDataSource, DatadogMetricsAction } from "./schema.js";

/**
 * A metric query: Datadog's metrics query API over the window, its series as it answered them. A log
 * search: counts and lines, as for Loki. Any failure is a `failed` observation in plain words.
 */
export const datadogRuntime: ConnectorRuntime<DatadogDataSource, DatadogAction> = {
  fetch: ({ query, ...request }) => ("logs" in query ? fetchLogs({ ...request, query }) : fetchMetrics({ ...request, query })),
};

async function fetchMetrics(request: FetchRequest<DatadogDataSource, DatadogMetricsAction>): Promise<DatadogMetricsObservation | FailedObservation> {
  const { query: action, window } = request;
  const failed = (reason: string): FailedObservation => ({ kind: "failed", reason });
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
  return { kind: "datadog-metrics", series: body.data.series, ...(action.unit === undefined ? {} : { unit: action.unit }) };
}
