import { defineConnector } from "../connector-definition.js";
import { LokiDataSource, LokiAction } from "./schema.js";
import { logqlTemplate } from "./logql-escape.js";
import { lokiLink } from "./loki-link.js";

/** The loki connector: log lines and counts of a LogQL selector over the window, grouped into patterns. */
export const lokiConnector = defineConnector({
  type: "loki",
  noun: "a Loki data source",
  builds: "query",
  dataSource: LokiDataSource,
  query: LokiAction,
  templates: [{ path: ["selector"], encoding: logqlTemplate }],
  link: (dataSource, query, window) => lokiLink(dataSource, query.selector, window),
  runtime: async () => (await import("./runtime.js")).lokiRuntime,
});
