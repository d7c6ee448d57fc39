import { defineConnector } from "../connector-definition.js";
import { PrometheusDataSource, PrometheusAction, promqlTemplate } from "./schema.js";
import { prometheusLink } from "./prometheus-link.js";

/** The prometheus connector: a PromQL query over the window, compared with the level before the issue. */
export const prometheusConnector = defineConnector({
  type: "prometheus",
  noun: "a Prometheus data source",
  builds: "query",
  dataSource: PrometheusDataSource,
  query: PrometheusAction,
  templates: [
    { path: ["query"], encoding: promqlTemplate },
    { path: ["limit"], encoding: promqlTemplate },
  ],
  link: (dataSource, query, window) => prometheusLink(dataSource, query.query, window, query.limit),
  runtime: async () => (await import("./runtime.js")).prometheusRuntime,
});
