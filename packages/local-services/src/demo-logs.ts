import type { DemoIncident } from "./demo-incident.js";

/** One log stream of the demo: its labels and its lines (the shape the fake Loki serves). */
export interface DemoLogStream {
  labels: Record<string, string>;
  entries: Array<{ at: Date; line: string }>;
}

const SECONDS_BETWEEN_INFO = 10;
const SECONDS_BETWEEN_USUAL_ERRORS = 60;
const SECONDS_BETWEEN_NEW_ERRORS = 4;

/**
 * The demo incident's application logs, for a Loki: `service` and `search` log a request every 10 s and
 * their usual error once a minute all along; from the incident minute on, `service` also logs an error
 * it never logged before (a price lookup failing in v1.42, the demo's deploy) every 4 s. A log analysis
 * should report that template as new, with an example line, and leave the usual error alone.
 */
export function demoIncidentLogs(options: DemoIncident): DemoLogStream[] {
  const service = options.service ?? "checkout";
  const incident = options.incidentAt.getTime();
  const start = options.start?.getTime() ?? incident - 3 * 3_600_000;
  const end = options.end?.getTime() ?? incident + 30 * 60_000;
  const streams: DemoLogStream[] = [];
  for (const name of [service, "search"]) {
    const entries: DemoLogStream["entries"] = [];
    let n = 0;
    for (let t = start; t <= end; t += 1000) {
      const second = (t - start) / 1000;
      if (second % SECONDS_BETWEEN_INFO === 0)
        entries.push({ at: new Date(t), line: `level=info msg="request handled" path=/api/${name} status=200 duration=${20 + (n++ % 30)}ms` });
      if (second % SECONDS_BETWEEN_USUAL_ERRORS === 30)
        entries.push({ at: new Date(t), line: `level=error msg="cache miss storm" key=${name}:${1000 + (n++ % 97)} took=${200 + (n % 50)}ms` });
      if (name === service && t >= incident && second % SECONDS_BETWEEN_NEW_ERRORS === 2) {
        entries.push({ at: new Date(t), line: `level=error msg="price lookup failed" err="KeyError: 'currency'" version=v1.42 order_id=ord-${40_000 + n++}` });
      }
    }
    streams.push({ labels: { service: name, env: "production" }, entries });
  }
  return streams;
}
