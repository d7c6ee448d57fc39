import { defineConnector } from "../connector-definition.js";
import { jsonStringTemplate } from "../template-encodings.js";
import { ElasticsearchDataSource, ElasticsearchAction } from "./schema.js";
import { elasticsearchLink } from "./discover-link.js";

/**
 * The elasticsearch connector: `_search` with a time range and term / match_phrase filters (values are
 * JSON strings of the body, never query_string syntax), a date histogram for the counts, the latest
 * documents for the lines.
 */
export const elasticsearchConnector = defineConnector({
  type: "elasticsearch",
  noun: "an Elasticsearch data source",
  builds: "search",
  dataSource: ElasticsearchDataSource,
  query: ElasticsearchAction,
  // Field names cannot hold a placeholder (FieldName), so only the values are filled.
  templates: [{ path: ["filters"], leaves: true, encoding: jsonStringTemplate }],
  link: (dataSource, query, window) => elasticsearchLink(dataSource, query, window),
  runtime: async () => (await import("./runtime.js")).elasticsearchRuntime,
});
