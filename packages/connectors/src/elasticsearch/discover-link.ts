import type { TimeWindow } from "../connector.js";
import { baseUrlOf } from "../url-text.js";
import { rison } from "./rison.js";
import type { ElasticsearchAction, ElasticsearchDataSource, ElasticsearchFilter } from "./schema.js";

/**
 * Discover on the data source's data view over the action's window, with the filters as a KQL query:
 * Kibana's (`/app/discover#/?_g=…&_a=…`) or, with `flavor: opensearch`, OpenSearch Dashboards' (≥ 2.10,
 * `/app/data-explorer/discover#?_a=…&_g=…&_q=…`). Undefined without `kibana`: the search API has no UI.
 */
export function elasticsearchLink(dataSource: ElasticsearchDataSource, action: ElasticsearchAction, window: TimeWindow): string | undefined {
  if (dataSource.kibana === undefined) return undefined;
  const { dataViewId } = dataSource.kibana;
  const base = baseUrlOf(dataSource.kibana);
  const time = rison({ time: { from: window.start.toISOString(), to: window.end.toISOString() } });
  const query = { language: "kuery", query: kqlOf(action.filters) };
  if (dataSource.flavor === "opensearch") {
    const state = rison({ discover: { columns: ["_source"], isDirty: false, sort: [] }, metadata: { indexPattern: dataViewId, view: "discover" } });
    return `${base}/app/data-explorer/discover#?_a=${encodeURIComponent(state)}&_g=${encodeURIComponent(time)}&_q=${encodeURIComponent(rison({ filters: [], query }))}`;
  }
  const state = rison({ dataSource: { dataViewId, type: "dataView" }, query });
  return `${base}/app/discover#/?_g=${encodeURIComponent(time)}&_a=${encodeURIComponent(state)}`;
}

/** The filters in KQL: `service:"checkout" and message:"connection refused"`, each value a quoted string. */
export function kqlOf(filters: readonly ElasticsearchFilter[]): string {
  return filters.map((filter) => `${filter.field}:${kqlString("term" in filter ? filter.term : filter.phrase)}`).join(" and ");
}

/** A KQL quoted string: `\` and `"` escaped with a backslash, so that a value stays one value. */
function kqlString(value: string): string {
  return `"${value.replace(/[\\"]/g, "\\$&")}"`;
}
