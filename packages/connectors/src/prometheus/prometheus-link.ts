import type { TimeWindow } from "../connector.js";
import { baseUrlOf } from "../url-text.js";
import type { PrometheusDataSource } from "./schema.js";

/**
 * The link to the query's graph over the action's window: Grafana Explore when the data source names a
 * Grafana, else Prometheus' own graph UI. `query` is the filled query, exactly what was run; `limit`, the
 * filled limit query when the action has one, is shown beside it.
 */
export function prometheusLink(dataSource: PrometheusDataSource, query: string, window: TimeWindow, limit?: string): string {
  const queries = limit === undefined ? [query] : [query, limit];
  if (dataSource.grafana !== undefined) {
    const { datasourceUid, orgId } = dataSource.grafana;
    // Grafana ≥ 10.2 Explore state: one pane "a" with the queries A, B….
    const panes = {
      a: {
        datasource: datasourceUid,
        queries: queries.map((expr, index) => ({ refId: String.fromCharCode(65 + index), datasource: { type: "prometheus", uid: datasourceUid }, expr })),
        range: { from: String(window.start.getTime()), to: String(window.end.getTime()) },
      },
    };
    return `${baseUrlOf(dataSource.grafana)}/explore?schemaVersion=1&orgId=${orgId}&panes=${encodeURIComponent(JSON.stringify(panes))}`;
  }
  const params = queries.flatMap((expr, index) => [
    `g${index}.expr=${encodeURIComponent(expr)}`,
    `g${index}.tab=0`,
    `g${index}.range_input=${rangeInput(window.end.getTime() - window.start.getTime())}`,
    `g${index}.end_input=${encodeURIComponent(endInput(window.end))}`,
  ]);
  return `${baseUrlOf(dataSource)}/graph?${params.join("&")}`;
}

/** The UI's range field: the largest single unit that divides the length, e.g. "75m", "2h", "90s". */
function rangeInput(milliseconds: number): string {
  const seconds = Math.max(1, Math.ceil(milliseconds / 1000));
  for (const [size, unit] of [
    [86_400, "d"],
    [3_600, "h"],
    [60, "m"],
  ] as const) {
    if (seconds % size === 0) return `${seconds / size}${unit}`;
  }
  return `${seconds}s`;
}

/** The UI's end field: "YYYY-MM-DD HH:mm:ss" in UTC. */
function endInput(end: Date): string {
  const iso = new Date(Math.ceil(end.getTime() / 1000) * 1000).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
}
