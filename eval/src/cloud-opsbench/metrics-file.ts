import type { PrometheusObservation, PrometheusSample } from "@pes/contracts";
import { localDate } from "./kubectl-text.js";

/** One column of metrics.csv (`<service or node>-<metric>`) as a series. */
export interface MetricSeries {
  entity: string;
  metric: string;
  /** Whether the entity is a node (its name is a node's), else a service. */
  node: boolean;
  samples: PrometheusSample[];
}

/** The units of the benchmark's metric names, where they are known. */
const UNITS: Record<string, string> = {
  cpu: "cores",
  mem: "bytes",
  rps: "req/s",
  success_rate: "ratio",
};
/** Latency quantiles (`p50latency`, `p95latency`) are in milliseconds. */
const LATENCY = /^p\d+latency$/;
/** A node's cpu and mem columns are percentages. */
const NODE_UNITS: Record<string, string> = { cpu: "%", mem: "%" };

function splitCsvLine(line: string): string[] {
  return line.split(",").map((cell) => cell.trim().replace(/^"|"$/g, ""));
}

/**
 * Reads metrics.csv (a `time` column of local times, then one column per entity and metric, the metric
 * after the last `-`: `redis-cart-cpu`, `worker-01-tcp_retans`) into series, empty cells left out.
 */
export function readMetricsCsv(text: string, zone: string, nodeNames: ReadonlySet<string>): MetricSeries[] {
  const lines = text
    .replace(/^\uFEFF/, "")
    .split(/\r?\n/)
    .filter((line) => line.trim() !== "");
  const header = splitCsvLine(lines[0] ?? "");
  const timeAt = header.findIndex((name) => name.toLowerCase() === "time" || name.toLowerCase() === "timestamp");
  if (timeAt < 0) return [];
  const series: Array<MetricSeries | undefined> = header.map((column, index) => {
    const dash = column.lastIndexOf("-");
    if (index === timeAt || dash <= 0) return undefined;
    const entity = column.slice(0, dash);
    return { entity, metric: column.slice(dash + 1), node: nodeNames.has(entity), samples: [] };
  });
  for (const line of lines.slice(1)) {
    const cells = splitCsvLine(line);
    const at = localDate(cells[timeAt] ?? "", zone);
    if (at === undefined) continue;
    const seconds = Date.parse(at) / 1000;
    cells.forEach((cell, index) => {
      const target = series[index];
      if (target === undefined || cell === "" || Number.isNaN(Number(cell))) return;
      target.samples.push([seconds, String(Number(cell))]);
    });
  }
  return series.filter((item): item is MetricSeries => item !== undefined && item.samples.length > 0);
}

/**
 * A series as a Prometheus range answer: labels `__name__`, `service` or `node` (and `namespace` for a
 * service); with a `limit`, the limit's series at the same instants (a constant), with a `threshold`
 * that value: what it saturates against; with a `direction` alone, which way it goes in trouble.
 */
export function metricObservation(
  series: MetricSeries,
  namespace: string,
  against?: { name: string; value: number } | { threshold: number } | { direction: "up" },
): PrometheusObservation {
  const limit = against !== undefined && "name" in against ? against : undefined;
  const unit = (series.node ? NODE_UNITS : UNITS)[series.metric] ?? (LATENCY.test(series.metric) ? "ms" : undefined);
  const labels: Record<string, string> = series.node ? { node: series.entity } : { service: series.entity, namespace };
  return {
    kind: "prometheus",
    data: {
      resultType: "matrix",
      result: [
        {
          metric: { __name__: series.metric, ...labels },
          values: series.samples,
        },
      ],
    },
    ...(unit === undefined ? {} : { unit }),
    ...(against !== undefined && "threshold" in against ? { threshold: against.threshold } : {}),
    ...(against !== undefined && "direction" in against ? { direction: against.direction } : {}),
    ...(limit === undefined
      ? {}
      : { limit: { name: limit.name, result: [{ metric: labels, values: series.samples.map(([at]): PrometheusSample => [at, String(limit.value)]) }] } }),
  };
}
