/**
 * A synthetic history with one known incident, as OpenMetrics text for `promtool tsdb
 * create-blocks-from openmetrics`: the end-to-end tests, the quickstart and the README demo all
 * investigate it, so what the service should find is known exactly.
 *
 * Series (the metric names the example playbooks query):
 * - `http_request_duration_seconds_bucket{service,le}`: p99 ≈ 0.49 s before the incident and ≈ 1.95 s
 *   from the incident minute on (histogram_quantile over rate(...[5m]) → about 4×).
 * - `http_requests_total{service,code}`: 50 req/s throughout; 5xx share 1 % before, 3 % after.
 * A second service, `search`, stays flat, so that a query scoped by attributes can be told apart.
 */

export interface DemoIncident {
  /** The minute the latency of `service` jumps. */
  incidentAt: Date;
  /** Where the history starts and ends; defaults: 3 h before and 30 min after the incident. */
  start?: Date;
  end?: Date;
  /** Default "checkout". */
  service?: string;
}

const STEP_SECONDS = 15;
const REQUESTS_PER_SECOND = 50;
const BUCKETS = ["0.1", "0.25", "0.5", "1", "2", "5", "+Inf"] as const;
/** Cumulative share of requests at or under each bucket bound. */
const NORMAL_SHARES = [0.1, 0.6, 1, 1, 1, 1, 1];
const INCIDENT_SHARES = [0.05, 0.3, 0.6, 0.8, 1, 1, 1];

/** Renders the demo history as OpenMetrics text ending in `# EOF`. */
export function demoIncidentOpenMetrics(options: DemoIncident): string {
  const service = options.service ?? "checkout";
  const incident = Math.floor(options.incidentAt.getTime() / 1000);
  const start = Math.floor((options.start?.getTime() ?? options.incidentAt.getTime() - 3 * 3_600_000) / 1000);
  const end = Math.floor((options.end?.getTime() ?? options.incidentAt.getTime() + 30 * 60_000) / 1000);
  const times: number[] = [];
  for (let t = start; t <= end; t += STEP_SECONDS) times.push(t);

  const lines: string[] = [];
  lines.push("# TYPE http_request_duration_seconds_bucket unknown");
  for (const name of [service, "search"]) {
    BUCKETS.forEach((le, index) => {
      let total = 0;
      for (const t of times) {
        const shares = name === service && t >= incident ? INCIDENT_SHARES : NORMAL_SHARES;
        total += REQUESTS_PER_SECOND * STEP_SECONDS * (shares[index] ?? 1);
        lines.push(`http_request_duration_seconds_bucket{service="${name}",le="${le}"} ${total} ${t}`);
      }
    });
  }
  lines.push("# TYPE http_requests_total unknown");
  for (const name of [service, "search"]) {
    for (const code of ["200", "500"]) {
      let total = 0;
      for (const t of times) {
        const errorShare = name === service && t >= incident ? 0.03 : 0.01;
        const share = code === "500" ? errorShare : 1 - errorShare;
        total += REQUESTS_PER_SECOND * STEP_SECONDS * share;
        lines.push(`http_requests_total{service="${name}",code="${code}"} ${total} ${t}`);
      }
    }
  }
  lines.push("# EOF", "");
  return lines.join("\n");
}
