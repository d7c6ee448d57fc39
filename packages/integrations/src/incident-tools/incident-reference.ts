/** Which incident a note goes to, in the terms of the tool's API. */
export type IncidentReference = { tool: "pagerduty"; incidentId: string } | { tool: "opsgenie"; identifier: string; identifierType: "id" | "alias" };

export type IncidentToolKind = IncidentReference["tool"];

/**
 * Attributes that name the incident directly: alert labels carry them, and an issue read from a chat
 * message gets the incident its links name under the same names.
 */
export const INCIDENT_ATTRIBUTES = {
  pagerduty: "pagerduty_incident_id",
  opsgenieId: "opsgenie_alert_id",
  opsgenieAlias: "opsgenie_alias",
} as const;

// What an identifier may hold: it becomes a URL path segment, so nothing that could change the path
// (`/`, `..`, `?`, `%`) gets through, whatever the alert carried. PagerDuty ids are upper-case letters
// and digits (`PT4KHLK`, `Q2FX6LP4ZS9TPM`); Opsgenie ids are UUIDs with a suffix
// (`22a1d1f7-8a77-4e3a-8050-8c51405541c1-1689010338026`); aliases are free text up to 512 characters.
const PAGERDUTY_ID = /^[A-Za-z0-9]{1,64}$/;
const OPSGENIE_ID = /^[A-Za-z0-9-]{1,128}$/;
const OPSGENIE_ALIAS_MAX = 512;

// Incident pages as the tools link them from their alerts and chat apps:
// https://<subdomain>.pagerduty.com/incidents/<id> (EU accounts: <subdomain>.eu.pagerduty.com), and
// https://<account>.app.opsgenie.com/alert/detail/<id>/details (EU: app.eu.opsgenie.com). The host must
// follow the scheme directly, so `https://evil.example/x.pagerduty.com/incidents/…` does not match; the
// link's host is never called anyway: notes go to the organization's configured API.
const PAGERDUTY_URL = /https:\/\/(?:[a-z0-9-]+\.)+pagerduty\.com\/incidents\/([A-Za-z0-9]+)/i;
const OPSGENIE_URL = /https:\/\/(?:[a-z0-9-]+\.)*app\.(?:eu\.)?opsgenie\.com\/alert\/detail\/([A-Za-z0-9-]+)/i;

/**
 * The incident of `tool` that an issue refers to: an attribute naming it first (`pagerduty_incident_id`;
 * `opsgenie_alert_id`, then `opsgenie_alias`), else an incident link in the text of the message the
 * issue came from. Undefined when there is none, or when the value is no valid identifier.
 */
export function findIncidentReference(
  tool: IncidentToolKind,
  source: { attributes: Readonly<Record<string, string>>; messageText?: string },
): IncidentReference | undefined {
  const { attributes, messageText = "" } = source;
  if (tool === "pagerduty") {
    const incidentId = attributes[INCIDENT_ATTRIBUTES.pagerduty]?.trim() || PAGERDUTY_URL.exec(messageText)?.[1];
    return incidentId !== undefined && PAGERDUTY_ID.test(incidentId) ? { tool, incidentId } : undefined;
  }
  const id = attributes[INCIDENT_ATTRIBUTES.opsgenieId]?.trim();
  if (id !== undefined && id !== "") return OPSGENIE_ID.test(id) ? { tool, identifier: id, identifierType: "id" } : undefined;
  const alias = attributes[INCIDENT_ATTRIBUTES.opsgenieAlias];
  if (alias !== undefined && alias.trim() !== "") {
    // An alias of only dots would be a `.`/`..` path segment, which URL parsing resolves even when encoded.
    const usable = alias.length <= OPSGENIE_ALIAS_MAX && !/^\.+$/.test(alias);
    return usable ? { tool, identifier: alias, identifierType: "alias" } : undefined;
  }
  const linked = OPSGENIE_URL.exec(messageText)?.[1];
  return linked !== undefined && OPSGENIE_ID.test(linked) ? { tool, identifier: linked, identifierType: "id" } : undefined;
}

/** The reference as people read it in a result's error or a log line. */
export function describeReference(reference: IncidentReference): string {
  return reference.tool === "pagerduty"
    ? `PagerDuty incident ${reference.incidentId}`
    : `Opsgenie alert ${reference.identifierType === "alias" ? "with alias " : ""}${reference.identifier}`;
}
