import { defineConnector } from "../connector-definition.js";
import { DatadogDataSource, DatadogAction, datadogMetricsTemplate, datadogLogsTemplate } from "./schema.js";
import { datadogLogsLink, datadogMetricsLink } from "./datadog-link.js";

/**
 * The datadog connector: a metric query over the window, compared with the level before the issue, or a
 * log search, its lines counted and grouped into patterns.
 */
export const datadogConnector = defineConnector({
  type: "datadog",
  noun: "a Datadog data source",
  builds: "query",
  dataSource: DatadogDataSource,
  query: DatadogAction,
  templates: [
    { path: ["metrics"], encoding: datadogMetricsTemplate },
    { path: ["logs"], encoding: datadogLogsTemplate },
  ],
  link: (dataSource, query, window) =>
    "logs" in query ? datadogLogsLink(dataSource, query.logs, window) : datadogMetricsLink(dataSource, query.metrics, window),
  runtime: async () => (await import("./runtime.js")).datadogRuntime,
});
