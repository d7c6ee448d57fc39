import { INCIDENT_ATTRIBUTES } from "../incident-tools/incident-reference.js";
import type { SlackLink } from "./slack-text.js";

/**
 * An incident in an incident tool that an alert message refers to, for adding a note to it: a
 * PagerDuty incident (REST `POST /incidents/{id}/notes`), or an Opsgenie alert by id or by alias
 * (`POST /v2/alerts/{identifier}/notes?identifierType=id|alias`).
 */
export type IncidentRef =
  | { tool: "pagerduty"; incidentId: string; url?: string }
  | { tool: "opsgenie"; alertId: string; url?: string }
  | { tool: "opsgenie"; alias: string };

/** PagerDuty object ids: upper-case letters and digits (`PT4KHLK`, `Q0RIJJZL24RC6W`). */
const PAGERDUTY_ID = /^[A-Z0-9]{5,32}$/;
/** Opsgenie alert ids: a UUID, often followed by `-<epoch ms>`. */
const OPSGENIE_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?:-\d{1,16})?$/i;
/** Opsgenie's aliases are free text up to 512 characters. */
const MAX_ALIAS_LENGTH = 512;

/**
 * The incident id in a PagerDuty incident URL: `https://<subdomain>.pagerduty.com/incidents/<ID>`
 * (the REST API's `incident.html_url`; EU accounts are `<subdomain>.eu.pagerduty.com`), with any
 * further path, query or fragment.
 */
export function pagerDutyIncidentId(url: string): string | undefined {
  const parsed = httpsUrl(url);
  if (parsed === undefined || !parsed.hostname.endsWith(".pagerduty.com")) return undefined;
  const id = /^\/incidents\/([^/]+)(?:\/|$)/.exec(parsed.pathname)?.[1];
  return id !== undefined && PAGERDUTY_ID.test(id) ? id : undefined;
}

/**
 * The alert id in an Opsgenie alert URL: `https://<account>.app.opsgenie.com/alert/detail/<id>/details`
 * (`app.eu.opsgenie.com` in the EU region), the link Opsgenie's notifications and UI use.
 */
export function opsgenieAlertId(url: string): string | undefined {
  const parsed = httpsUrl(url);
  if (parsed === undefined || !/(?:^|\.)app(?:\.eu)?\.opsgenie\.com$/.test(parsed.hostname)) return undefined;
  const id = /^\/alert\/detail\/([^/]+)(?:\/|$)/.exec(parsed.pathname)?.[1];
  return id !== undefined && OPSGENIE_ID.test(id) ? id : undefined;
}

/**
 * The incidents a message refers to, each once, in the order found: from its links (PagerDuty incident
 * and Opsgenie alert URLs), then from labels that name one (`pagerduty_incident_id`,
 * `opsgenie_alert_id`, `opsgenie_alias`), as teams add them to alert labels for exactly this purpose.
 */
export function findIncidentRefs(links: readonly SlackLink[], labels: Readonly<Record<string, string>>): IncidentRef[] {
  const refs = new Map<string, IncidentRef>();
  for (const { url } of links) {
    const incidentId = pagerDutyIncidentId(url);
    if (incidentId !== undefined && !refs.has(`pagerduty:${incidentId}`)) refs.set(`pagerduty:${incidentId}`, { tool: "pagerduty", incidentId, url });
    const alertId = opsgenieAlertId(url);
    if (alertId !== undefined && !refs.has(`opsgenie:${alertId}`)) refs.set(`opsgenie:${alertId}`, { tool: "opsgenie", alertId, url });
  }
  const labelled = (name: string): string | undefined => (Object.hasOwn(labels, name) ? labels[name]?.trim() : undefined);
  const incidentId = labelled(INCIDENT_ATTRIBUTES.pagerduty);
  if (incidentId !== undefined && PAGERDUTY_ID.test(incidentId) && !refs.has(`pagerduty:${incidentId}`)) {
    refs.set(`pagerduty:${incidentId}`, { tool: "pagerduty", incidentId });
  }
  const alertId = labelled(INCIDENT_ATTRIBUTES.opsgenieId);
  if (alertId !== undefined && OPSGENIE_ID.test(alertId) && !refs.has(`opsgenie:${alertId}`)) {
    refs.set(`opsgenie:${alertId}`, { tool: "opsgenie", alertId });
  }
  const alias = labelled(INCIDENT_ATTRIBUTES.opsgenieAlias);
  if (alias !== undefined && alias !== "" && alias.length <= MAX_ALIAS_LENGTH) refs.set(`opsgenie-alias:${alias}`, { tool: "opsgenie", alias });
  return [...refs.values()];
}

function httpsUrl(url: string): URL | undefined {
  try {
    const parsed = new URL(url);
    return parsed.protocol === "https:" && parsed.username === "" && parsed.password === "" ? parsed : undefined;
  } catch {
    return undefined;
  }
}
