import type { TimeWindow } from "../connector.js";
import { grafanaExploreLink } from "../grafana-explore.js";
import type { LokiDataSource } from "./schema.js";

/**
 * Grafana Explore with the filled selector over the action's window, when the data source names a Grafana
 * (Loki has no UI of its own: undefined otherwise).
 */
export function lokiLink(dataSource: LokiDataSource, selector: string, window: TimeWindow): string | undefined {
  if (dataSource.grafana === undefined) return undefined;
  return grafanaExploreLink(dataSource.grafana, "loki", [{ expr: selector, queryType: "range", editorMode: "code" }], window);
}
