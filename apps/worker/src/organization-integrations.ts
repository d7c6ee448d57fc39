import type { Catalog, IntegrationSecrets } from "@pes/config";
import { createSlackPostClient, createTeamsPostClient, type IncidentToolConfig, type SlackConnection, type TeamsPostClient } from "@pes/integrations";

/** One organization's Slack app, Teams account and incident tools, their secrets resolved: built once, at start. */
export interface OrganizationIntegrations {
  slack?: {
    /** For reading linked messages (`fetchLinkedMessage`). */
    connection: SlackConnection;
    /** For posting (`postEnrichment`): no retries of its own, rate limits left to the caller. */
    postClient: ReturnType<typeof createSlackPostClient>;
    /** Hosts accepted in message links besides `*.slack.com`: the organization's and CHAT_ALLOWED_HOSTS. */
    allowedHosts: readonly string[];
  };
  /** For posting to Teams channels (`postTeamsEnrichment`): no retries of its own, throttling left to the caller. */
  teams?: { postClient: TeamsPostClient };
  /** In the order a note is tried: PagerDuty, then Opsgenie. Empty without `incidentTools`. */
  incidentTools: IncidentToolConfig[];
}

/**
 * The integrations of every organization of the catalog, from its configuration and the secrets the
 * worker resolved at start (resolveCatalogSecrets: a missing one stopped it before this runs).
 */
export function buildIntegrations(catalog: Catalog, secrets: IntegrationSecrets, allowedChatHosts: readonly string[]): Map<string, OrganizationIntegrations> {
  const byOrganization = new Map<string, OrganizationIntegrations>();
  for (const org of catalog.organizations.values()) {
    const resolved = secrets.get(org.id);
    const integrations: OrganizationIntegrations = { incidentTools: [] };
    if (org.slack !== undefined && resolved !== undefined) {
      const token = resolved.value(org.slack.botToken);
      integrations.slack = {
        connection: { token, slackApiUrl: org.slack.apiUrl },
        postClient: createSlackPostClient({ token, apiUrl: org.slack.apiUrl }),
        allowedHosts: [...org.slack.allowedHosts, ...allowedChatHosts],
      };
    }
    if (org.teams !== undefined && resolved !== undefined) {
      const { tenantId, clientId, graphUrl, loginUrl } = org.teams;
      integrations.teams = {
        postClient: createTeamsPostClient({
          tenantId,
          clientId,
          clientSecret: resolved.value(org.teams.clientSecret),
          refreshToken: resolved.value(org.teams.refreshToken),
          graphUrl,
          loginUrl,
        }),
      };
    }
    const { pagerduty, opsgenie } = org.incidentTools ?? {};
    if (pagerduty !== undefined && resolved !== undefined) {
      integrations.incidentTools.push({
        tool: "pagerduty",
        apiToken: resolved.value(pagerduty.apiToken),
        fromEmail: pagerduty.from,
        baseUrl: pagerduty.apiUrl,
      });
    }
    if (opsgenie !== undefined && resolved !== undefined) {
      integrations.incidentTools.push({ tool: "opsgenie", apiKey: resolved.value(opsgenie.apiKey), baseUrl: opsgenie.apiUrl });
    }
    byOrganization.set(org.id, integrations);
  }
  return byOrganization;
}
