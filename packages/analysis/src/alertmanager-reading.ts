import type { AlertmanagerObservation, GettableAlert, GettableSilence, TimeWindow } from "@pes/contracts";
import type { Evidence } from "./evidence.js";
import type { ReadingContext } from "./reading-context.js";
import { compareText, labelKey } from "./series.js";

/** Alerts reported at most: the most severe, then the earliest. */
const MAX_ALERTS = 20;
/** Most severe first; any other severity (or none) after these. */
const SEVERITY_ORDER = ["critical", "error", "warning", "info"];
/** Labels that are the alert's name and level, not what it fires for. */
const NOT_SUBJECT = new Set(["alertname", "severity"]);

/**
 * The alerts that fired in the window (Alertmanager answers what it holds now, which includes alerts
 * that started long ago), most severe first, then the silences active in it. Nothing firing is a `none`.
 */
export function readAlertmanager(observation: AlertmanagerObservation, reading: ReadingContext): Evidence[] {
  const { window } = reading;
  const cited = { action: reading.action, ...(reading.link === undefined ? {} : { link: reading.link }) };
  const firing = observation.alerts
    .filter((alert) => firedIn(alert, window))
    .sort(bySeverityThenOnset)
    .slice(0, MAX_ALERTS);
  const found: Evidence[] = firing.map((alert) => alertEvidence(alert, cited));
  if (found.length === 0) found.push({ kind: "none", ...cited, what: "alerts firing" });
  const silences = (observation.silences ?? [])
    .filter((item) => activeIn(item, window))
    .sort((a, b) => Date.parse(a.startsAt) - Date.parse(b.startsAt) || compareText(a.id, b.id));
  for (const silence of silences) found.push({ kind: "answer", ...cited, text: silenceText(silence, window) });
  return found;
}

/** Firing at some moment of the window: started before its end, not ended before its start. */
function firedIn(alert: GettableAlert, window: TimeWindow): boolean {
  return Date.parse(alert.startsAt) < window.end.getTime() && Date.parse(alert.endsAt) >= window.start.getTime();
}

function severityRank(alert: GettableAlert): number {
  const rank = SEVERITY_ORDER.indexOf(alert.labels.severity ?? "");
  return rank === -1 ? SEVERITY_ORDER.length : rank;
}

/** Most severe, then earliest, then by labels: the same alerts in any order are read (and cut) alike. */
function bySeverityThenOnset(a: GettableAlert, b: GettableAlert): number {
  return severityRank(a) - severityRank(b) || Date.parse(a.startsAt) - Date.parse(b.startsAt) || compareText(labelKey(a.labels), labelKey(b.labels));
}

function alertEvidence(alert: GettableAlert, cited: { action: string; link?: string }): Evidence {
  const { alertname, severity } = alert.labels;
  const labels = Object.entries(alert.labels)
    .filter(([name]) => !NOT_SUBJECT.has(name))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const subject = labels.map(([name, value]) => `${name}=${value}`).join(", ");
  return {
    kind: "alert",
    ...cited,
    name: alertname ?? "(unnamed alert)",
    ...(subject === "" ? {} : { subject, labels: Object.fromEntries(labels) }),
    ...(severity === undefined ? {} : { level: severity }),
    onset: new Date(alert.startsAt),
  };
}

/** Active now, or active during the window and expired since. */
function activeIn(silence: GettableSilence, window: TimeWindow): boolean {
  if (silence.status.state === "active") return true;
  return silence.status.state === "expired" && Date.parse(silence.startsAt) <= window.end.getTime() && Date.parse(silence.endsAt) >= window.start.getTime();
}

/** "silenced by ops until 15:00 UTC: deploying the fix" (with the date when it is not the issue's day). */
function silenceText(silence: GettableSilence, window: TimeWindow): string {
  const ends = new Date(silence.endsAt).toISOString();
  const sameDay = ends.slice(0, 10) === window.time.toISOString().slice(0, 10);
  const until = `${sameDay ? "" : `${ends.slice(0, 10)} `}${ends.slice(11, 16)} UTC`;
  return `silenced by ${silence.createdBy} until ${until}${silence.comment === "" ? "" : `: ${silence.comment}`}`;
}
