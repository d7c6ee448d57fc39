import type { TimeWindow } from "../connector.js";
import { grafanaExploreLink } from "../grafana-explore.js";
import { baseUrlOf } from "../url-text.js";
import type { PrometheusDataSource } from "./schema.js";

/**
 * The link to the query's graph over the action's window: Grafana Explore when the data source names a
 * Grafana, else Prometheus' own graph UI. `query` is the filled query, exactly what was run; `limit`, the
 * filled limit query when the action has one, is shown beside it.
 */
export function prometheusLink(dataSource: PrometheusDataSource, query: string, window: TimeWindow, limit?: string): string {
  const queries = limit === undefined ? [query] : [query, limit];
  if (dataSource.grafana !== undefined)
    return grafanaExploreLink(
      dataSource.grafana,
      "prometheus",
      queries.map((expr) => ({ expr })),
      window,
    );
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
