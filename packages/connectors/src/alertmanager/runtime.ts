import { describeFetchFailure, type Evidence, type TimeWindow } from "@pes/analysis";
import type { z } from "zod";
import type { ActionRequest, ConnectorRuntime, FetchRequest, Found } from "../connector.js";
import { answeredError } from "../error-answer.js";
import { authorizationHeader } from "../http-auth.js";
import { answerText, MAX_RESPONSE_BYTES } from "../http-client.js";
import { runConnectorAction } from "../run-action.js";
import { baseUrlOf } from "../url-text.js";
import { matcherText } from "./alertmanager-matchers.js";
import { GettableAlerts, GettableSilences, type GettableAlert, type GettableSilence } from "./alertmanager-response.js";
import { alertmanagerConnector, type AlertmanagerAction, type AlertmanagerDataSource } from "./schema.js";

const TARGET = "Alertmanager";
/** Alerts reported at most: the most severe, then the earliest. */
const MAX_ALERTS = 20;
/** Most severe first; any other severity (or none) after these. */
const SEVERITY_ORDER = ["critical", "error", "warning", "info"];
/** Labels that are the alert's name and level, not what it fires for. */
const NOT_SUBJECT = new Set(["alertname", "severity"]);

type Request = FetchRequest<AlertmanagerDataSource, AlertmanagerAction>;

/**
 * Asks Alertmanager (API v2) for the alerts matching the action's matchers and keeps those firing in the
 * window (the API has no time filter: it answers what it holds now, which includes alerts that started
 * long ago), most severe first; with `silences`, also the silences with the same matchers active in
 * the window. Nothing firing is a `none`; any failure a `failed` in plain words.
 */
export const alertmanagerRuntime: ConnectorRuntime<AlertmanagerDataSource, AlertmanagerAction> = {
  async fetch(request) {
    const { title, query: action, window, link } = request;
    const cited = { action: title, ...(link === undefined ? {} : { link }) };
    const failed = (reason: string): Evidence => ({ kind: "failed", ...cited, reason });

    let headers: Record<string, string>;
    try {
      headers = { accept: "application/json", ...authorizationHeader(request.dataSource.auth, request.secrets) };
    } catch (error) {
      return failed(`cannot authenticate to ${TARGET}: ${error instanceof Error ? error.message : String(error)}`);
    }
    const filter = action.matchers.map((matcher): [string, string] => ["filter", matcherText(matcher)]);
    const alertParams: Array<[string, string]> = [...filter, ["active", "true"], ["silenced", String(action.includeSilenced)], ["inhibited", String(action.includeInhibited)]];
    const [alerts, silences] = await Promise.all([
      get(request, headers, "alerts", alertParams, GettableAlerts),
      action.silences ? get(request, headers, "silences", filter, GettableSilences) : [],
    ]);
    if (typeof alerts === "string") return failed(alerts);
    if (typeof silences === "string") return failed(silences);

    const firing = alerts.filter((alert) => firedIn(alert, window)).sort(bySeverityThenOnset).slice(0, MAX_ALERTS);
    const found: Evidence[] = firing.map((alert) => alertEvidence(alert, cited));
    if (found.length === 0) found.push({ kind: "none", ...cited, what: "alerts firing" });
    for (const silence of silences.filter((item) => activeIn(item, window)).sort((a, b) => Date.parse(a.startsAt) - Date.parse(b.startsAt))) {
      found.push({ kind: "answer", ...cited, text: silenceText(silence, window) });
    }
    return found;
  },
};

/** One GET of the API v2; its parsed answer, or why not in plain words. */
async function get<T>(request: Request, headers: Record<string, string>, resource: string, params: Array<[string, string]>, schema: z.ZodType<T>): Promise<T | string> {
  const { signal, http } = request;
  const url = `${baseUrlOf(request.dataSource)}/api/v2/${resource}?${new URLSearchParams(params).toString()}`;
  try {
    const answer = await http.request(url, { method: "GET", headers, signal });
    if (answer.status < 200 || answer.status > 299) return answeredError(TARGET, answer);
    let json: unknown;
    try {
      json = JSON.parse(answerText(answer.body));
    } catch {
      return `${TARGET} answered with something that is not JSON`;
    }
    const parsed = schema.safeParse(json);
    return parsed.success ? parsed.data : `${TARGET} answered ${resource} in a shape this connector does not know`;
  } catch (error) {
    return describeFetchFailure(error, signal, TARGET, MAX_RESPONSE_BYTES);
  }
}

/** Firing at some moment of the window: started before its end, not ended before its start. */
function firedIn(alert: GettableAlert, window: TimeWindow): boolean {
  return Date.parse(alert.startsAt) < window.end.getTime() && Date.parse(alert.endsAt) >= window.start.getTime();
}

function severityRank(alert: GettableAlert): number {
  const rank = SEVERITY_ORDER.indexOf(alert.labels.severity ?? "");
  return rank === -1 ? SEVERITY_ORDER.length : rank;
}

function bySeverityThenOnset(a: GettableAlert, b: GettableAlert): number {
  return severityRank(a) - severityRank(b) || Date.parse(a.startsAt) - Date.parse(b.startsAt);
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

/**
 * Runs one Alertmanager action: fills the matchers' values, then fetches. The worker runs actions
 * through the registry; this is the same path, for this connector's own tests.
 */
export function runAlertmanagerAction(request: ActionRequest<AlertmanagerDataSource, AlertmanagerAction>): Promise<Found> {
  return runConnectorAction(alertmanagerConnector.definition, alertmanagerRuntime, request);
}
