import type { AlertmanagerObservation, GettableAlert } from "@pes/contracts";
import { localDate } from "./kubectl-text.js";

/** How long after the collection a firing alert is taken to last: Alertmanager's default resolve_timeout. */
const FIRING_FOR_MS = 5 * 60_000;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The benchmark's alert.json (`{status, alerts: [{type: "Service"|"Node", name, time_range: "a ~ b",
 * status: "ABNORMAL", evidence: ["LATENCY_DEGRADATION [Slow Response] | …"]}]}`) as Alertmanager's
 * alerts: one per evidence line, `alertname` its kind, `service` or `node` what it fires for, the line
 * itself as `description`. Still abnormal at the collection, each is firing then: it ends after it.
 * `undefined` when the file holds no alert.
 */
export function alertsObservation(file: unknown, namespace: string, zone: string, collectedAt: Date): AlertmanagerObservation | undefined {
  if (!isRecord(file) || !Array.isArray(file.alerts)) return undefined;
  const alerts: GettableAlert[] = [];
  for (const alert of file.alerts) {
    if (!isRecord(alert)) continue;
    const target = typeof alert.name === "string" ? alert.name : "";
    const type = typeof alert.type === "string" ? alert.type.toLowerCase() : "service";
    const [from, to] = (typeof alert.time_range === "string" ? alert.time_range : "").split("~").map((part) => localDate(part, zone));
    const startsAt = from ?? collectedAt.toISOString();
    const firing = new Date(Math.max(Date.parse(to ?? startsAt), collectedAt.getTime() + FIRING_FOR_MS)).toISOString();
    const endsAt = alert.status === "ABNORMAL" ? firing : (to ?? firing);
    const evidence = Array.isArray(alert.evidence) ? alert.evidence.filter((line): line is string => typeof line === "string") : [];
    for (const line of evidence.length === 0 ? [""] : evidence) {
      const kind = /^([A-Z_]+)/.exec(line)?.[1] ?? "ABNORMAL";
      const signal = /\[([^\]]*)\]/.exec(line)?.[1];
      alerts.push({
        labels: {
          alertname: kind,
          severity: "warning",
          [type === "node" ? "node" : "service"]: target,
          ...(type === "node" ? {} : { namespace }),
          ...(signal === undefined ? {} : { signal }),
          ...(line === "" ? {} : { description: line }),
        },
        startsAt,
        endsAt,
      });
    }
  }
  return alerts.length === 0 ? undefined : { kind: "alertmanager", alerts };
}
