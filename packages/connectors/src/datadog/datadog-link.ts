import type { TimeWindow } from "../connector.js";
import { baseUrlOf } from "../url-text.js";
import type { DatadogDataSource } from "./schema.js";

/**
 * The web app of the data source's site: `appUrl` when set, else derived from the API host as Datadog
 * names its sites: `api.datadoghq.com` → `app.datadoghq.com`, `api.datadoghq.eu` → `app.datadoghq.eu`,
 * `api.us5.datadoghq.com` → `us5.datadoghq.com`. A URL that is not an `api.` host (a proxy) is kept.
 */
export function datadogAppUrl(dataSource: DatadogDataSource): string {
  if (dataSource.appUrl !== undefined) return baseUrlOf({ url: dataSource.appUrl });
  const url = new URL(baseUrlOf(dataSource));
  if (!url.hostname.startsWith("api.")) return url.origin;
  const site = url.hostname.slice("api.".length);
  // A site's own host has a label before its domain (us5.datadoghq.com); the first site's is `app.`.
  url.hostname = site.split(".").length > 2 ? site : `app.${site}`;
  return url.origin;
}

// `avg:metric.name{scope}`: what the explorer's fields can hold (functions and arithmetic cannot).
const SIMPLE_QUERY = /^\s*(?:(avg|sum|min|max):)?([A-Za-z][\w.]*)\s*\{([^}]*)\}/;

/**
 * The Metrics Explorer over the window, on the query's metric, scope and aggregation (its first
 * `agg:metric{scope}`: the explorer's fields take no functions). `query` is the filled query.
 */
export function datadogMetricsLink(dataSource: DatadogDataSource, query: string, window: TimeWindow): string {
  const params = new URLSearchParams({ from_ts: String(window.start.getTime()), to_ts: String(window.end.getTime()), live: "false" });
  const simple = SIMPLE_QUERY.exec(query);
  if (simple !== null) {
    const [, aggregation, metric, scope] = simple;
    if (metric !== undefined) params.set("exp_metric", metric);
    if (scope !== undefined && scope.trim() !== "*" && scope.trim() !== "") params.set("exp_scope", scope.trim());
    if (aggregation !== undefined) params.set("exp_agg", aggregation);
  }
  return `${datadogAppUrl(dataSource)}/metric/explorer?${params.toString()}`;
}

/** The Log Explorer on the filled search over the window, not live (the window stays the incident's). */
export function datadogLogsLink(dataSource: DatadogDataSource, query: string, window: TimeWindow): string {
  const params = new URLSearchParams({ query, from_ts: String(window.start.getTime()), to_ts: String(window.end.getTime()), live: "false" });
  return `${datadogAppUrl(dataSource)}/logs?${params.toString()}`;
}
