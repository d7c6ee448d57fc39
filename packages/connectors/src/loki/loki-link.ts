import type { TimeWindow } from "../connector.js";
import { baseUrlOf } from "../url-text.js";
import type { LokiDataSource } from "./schema.js";

/**
 * Grafana Explore with the filled selector over the action's window, when the data source names a Grafana
 * (Loki has no UI of its own: undefined otherwise).
 */
export function lokiLink(dataSource: LokiDataSource, selector: string, window: TimeWindow): string | undefined {
  if (dataSource.grafana === undefined) return undefined;
  const { datasourceUid, orgId } = dataSource.grafana;
  // Grafana ≥ 10.2 Explore state: one pane "a" with one range query, as for Prometheus.
  const panes = {
    a: {
      datasource: datasourceUid,
      queries: [{ refId: "A", datasource: { type: "loki", uid: datasourceUid }, expr: selector, queryType: "range", editorMode: "code" }],
      range: { from: String(window.start.getTime()), to: String(window.end.getTime()) },
    },
  };
  return `${baseUrlOf(dataSource.grafana)}/explore?schemaVersion=1&orgId=${orgId}&panes=${encodeURIComponent(JSON.stringify(panes))}`;
}
