import type { OrganizationCatalog } from "@pes/config";
import type { OutboundDestination } from "./outbound-requests.js";

/** Where Slack uploads files (files.getUploadURLExternal's `upload_url`), besides its Web API. */
const SLACK_FILES_ORIGIN = "https://files.slack.com";

/**
 * The services an organization's executions send to, by origin, as its configuration and the worker's
 * settings name them: its Slack app's Web API (and Slack's file uploads), Microsoft Graph and its login
 * (Teams), PagerDuty, Opsgenie, and the language model (LLM_BASE_URL). The data sources are not among
 * them: what goes to those is the queries, recorded as sent.
 */
export function auditDestinations(org: OrganizationCatalog | undefined, languageModelUrl: string | undefined): OutboundDestination[] {
  const destinations: OutboundDestination[] = [];
  const add = (service: string, url: string | undefined) => {
    const origin = originOf(url);
    if (origin !== undefined && !destinations.some((known) => known.origin === origin)) destinations.push({ service, origin });
  };
  add("language-model", languageModelUrl);
  if (org?.slack !== undefined) {
    add("slack", org.slack.apiUrl);
    add("slack", SLACK_FILES_ORIGIN);
  }
  if (org?.teams !== undefined) {
    add("teams", org.teams.graphUrl);
    add("teams", org.teams.loginUrl);
  }
  add("pagerduty", org?.incidentTools?.pagerduty?.apiUrl);
  add("opsgenie", org?.incidentTools?.opsgenie?.apiUrl);
  return destinations;
}

function originOf(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}
