import { resolveCatalogSecrets, type Catalog } from "@pes/config";
import type { SlackApp } from "../routes/slack-interactivity-routes.js";

/** How long one call to Slack may take while Slack waits (3 s) for the API's answer. */
const SLACK_REQUEST_TIMEOUT_MS = 2_000;

/**
 * The Slack apps of the organizations whose `slack:` has a `signingSecret`, their secrets resolved from
 * the environment: the API takes their interactions. Throws, naming the organization and the reference
 * (never a value), when one of those secrets cannot be resolved. Slack's client is loaded only when an
 * organization has one.
 */
export async function slackAppsOf(catalog: Catalog, env: NodeJS.ProcessEnv): Promise<Map<string, SlackApp>> {
  const apps = new Map<string, SlackApp>();
  const taking = [...catalog.organizations.values()].filter((org) => org.slack?.signingSecret !== undefined);
  if (taking.length === 0) return apps;
  const { integrations, missing } = resolveCatalogSecrets(catalog, { env });
  const { createSlackPostClient } = await import("@pes/integrations/slack-feedback");
  for (const org of taking) {
    const slack = org.slack;
    if (slack?.signingSecret === undefined) continue;
    const unresolved = missing.filter((message) => message.startsWith(`organization ${org.id}, slack:`));
    if (unresolved.length > 0) throw new Error(`cannot take Slack interactions: ${unresolved.join("; ")}`);
    const secrets = integrations.get(org.id);
    if (secrets === undefined) continue;
    apps.set(org.id, {
      signingSecret: secrets.value(slack.signingSecret),
      client: createSlackPostClient({ token: secrets.value(slack.botToken), apiUrl: slack.apiUrl, requestTimeoutMs: SLACK_REQUEST_TIMEOUT_MS }),
    });
  }
  return apps;
}
