import { absoluteUrlTemplate, dataSourcePathTemplate, jsonStringTemplate, textTemplate } from "../template-encodings.js";
import { defineConnector } from "../connector-definition.js";
import { withoutCredentials } from "../url-text.js";
import { HttpDataSource, HttpAction } from "./schema.js";
import { httpRequestUrl } from "./http-request-url.js";

/**
 * The http connector: one request to a JSON API, whose answer at `answerField` is the short answer. The
 * path cannot leave the data source's path, the link keeps the origin and path its template fixes, and
 * the body is serialized after filling, so a value cannot break its structure.
 */
export const httpConnector = defineConnector({
  type: "http",
  noun: "an HTTP data source",
  builds: "request",
  dataSource: HttpDataSource,
  query: HttpAction,
  templates: [
    { path: ["path"], encoding: dataSourcePathTemplate },
    { path: ["link"], encoding: absoluteUrlTemplate },
    { path: ["body"], leaves: true, encoding: jsonStringTemplate },
    { path: ["change", "subject"], encoding: textTemplate },
  ],
  link: (dataSource, query) => query.link ?? withoutCredentials(httpRequestUrl(dataSource, query)),
  runtime: async () => (await import("./runtime.js")).httpRuntime,
});
