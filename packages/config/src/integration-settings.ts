import { SecretRef } from "@pes/connectors/schemas";
import { parseTeamsChannelId } from "@pes/contracts";
import { z } from "zod";

/** Slack's Web API; GovSlack and tests configure another. */
export const DEFAULT_SLACK_API_URL = "https://slack.com/api/";
/** Microsoft Graph, version 1.0; national clouds have their own (`https://graph.microsoft.us/v1.0/`). */
export const DEFAULT_GRAPH_URL = "https://graph.microsoft.com/v1.0/";
/** The Microsoft identity platform's token service; national clouds have their own. */
export const DEFAULT_LOGIN_URL = "https://login.microsoftonline.com/";
/** PagerDuty's REST API. */
export const DEFAULT_PAGERDUTY_API_URL = "https://api.pagerduty.com";
/** Opsgenie's API in its US region; the EU region is `https://api.eu.opsgenie.com`. */
export const DEFAULT_OPSGENIE_API_URL = "https://api.opsgenie.com";

/** A host name as it appears in a link: labels of letters, digits and `-`, compared lower-cased. */
const HOST_NAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;

const apiUrl = (fallback: string) => z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }).default(fallback);

/**
 * `slack:` in an organization file: the Slack app the service reads message links and posts results
 * with. Its bot token is a secret reference, resolved by the worker at start.
 */
export const SlackSettings = z.strictObject({
  /** The app's bot token (`xoxb-…`). */
  botToken: SecretRef,
  /**
   * The app's signing secret (Basic Information → App Credentials): with it, the API takes the app's
   * interactivity requests (the feedback buttons under a result) at `POST /integrations/slack/interactivity`.
   * Absent: results are posted without those buttons' answers being accepted.
   */
  signingSecret: SecretRef.optional(),
  /** The Web API base URL, up to and including `/api/` (GovSlack: `https://slack-gov.com/api/`). */
  apiUrl: apiUrl(DEFAULT_SLACK_API_URL).transform((url) => (url.endsWith("/") ? url : `${url}/`)),
  /** Hosts whose message links are accepted besides `*.slack.com` (an Enterprise Grid or GovSlack host). */
  allowedHosts: z
    .array(
      z
        .string()
        .transform((host) => host.toLowerCase())
        .pipe(z.string().regex(HOST_NAME, "a host is a DNS name such as acme.enterprise.slack.com (no scheme, port or path)")),
    )
    .default([]),
  /**
   * Where investigations started by alert webhooks (`POST /webhooks/alertmanager`) post their results
   * when the webhook's URL names no `channelId`. Absent: such investigations post nowhere (read them back
   * with `GET /playbook/execution/{id}`). Executions called directly never default to it.
   */
  alertChannelId: z.string().trim().min(1).max(256).optional(),
});
export type SlackSettings = z.infer<typeof SlackSettings>;

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

/**
 * A Microsoft endpoint that receives the app's secret or a bearer token: https, or plain http to this
 * machine only (a local fake in tests, or a local TLS-terminating proxy). Always ends in `/`.
 */
const microsoftUrl = (fallback: string) =>
  z
    .url({ protocol: /^https?$/, error: "must be an http(s) URL", abort: true })
    .refine((url) => url.startsWith("https:") || LOOPBACK_HOSTS.has(new URL(url).hostname), "must be https (plain http only to 127.0.0.1 or localhost)")
    .default(fallback)
    .transform((url) => (url.endsWith("/") ? url : `${url}/`));

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * `teams:` in an organization file: the Microsoft Entra app and the service account it posts results to
 * Microsoft Teams channels as (Microsoft Graph, delegated `ChannelMessage.Send`: Graph posts channel
 * messages without a signed-in user only to import history). `channelId` names a Teams channel as
 * `<team-id>/<channel-id>`. Secrets are references, resolved by the worker at start (docs/microsoft-teams.md).
 */
export const TeamsSettings = z.strictObject({
  /** The directory (tenant) ID, or its verified domain name. */
  tenantId: z
    .string()
    .trim()
    .regex(/^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[a-z0-9.-]{1,253})$/i, "tenantId must be the directory's GUID or domain name"),
  /** The application (client) ID of the app registration. */
  clientId: z.string().trim().regex(GUID, "clientId must be the app registration's application (client) ID, a GUID"),
  /** A client secret of the app registration. */
  clientSecret: SecretRef,
  /** The service account's refresh token, from its one-time sign-in to the app (docs/microsoft-teams.md). */
  refreshToken: SecretRef,
  /** Microsoft Graph's base URL, with its version (`https://graph.microsoft.com/v1.0/`). */
  graphUrl: microsoftUrl(DEFAULT_GRAPH_URL),
  /** The token service's base URL; the token endpoint is `<loginUrl><tenantId>/oauth2/v2.0/token`. */
  loginUrl: microsoftUrl(DEFAULT_LOGIN_URL),
  /** As `slack.alertChannelId`, for a Teams channel (`<team-id>/<channel-id>`). */
  alertChannelId: z
    .string()
    .trim()
    .refine((id) => parseTeamsChannelId(id) !== undefined, "alertChannelId must be <team-id>/<channel-id>, e.g. 0b1c…/19:…@thread.tacv2")
    .optional(),
});
export type TeamsSettings = z.infer<typeof TeamsSettings>;

/** PagerDuty's REST API, for incident notes (`POST /incidents/{id}/notes`). */
export const PagerDutySettings = z.strictObject({
  /** A REST API key (account or user token). */
  apiToken: SecretRef,
  /** The `From` header PagerDuty requires: the email of the user the notes are attributed to. */
  from: z.email({ error: "from must be the email of a PagerDuty user" }),
  apiUrl: apiUrl(DEFAULT_PAGERDUTY_API_URL),
});
export type PagerDutySettings = z.infer<typeof PagerDutySettings>;

/** Opsgenie's Alert API, for alert notes (`POST /v2/alerts/{identifier}/notes`). */
export const OpsgenieSettings = z.strictObject({
  /** The key of an API integration. */
  apiKey: SecretRef,
  /** `https://api.opsgenie.com` (US, the default) or `https://api.eu.opsgenie.com` (EU). */
  apiUrl: apiUrl(DEFAULT_OPSGENIE_API_URL),
});
export type OpsgenieSettings = z.infer<typeof OpsgenieSettings>;

/**
 * `incidentTools:` in an organization file: where `liveRun: true` adds its note. With both, the note goes
 * to the tool the issue names an incident of (PagerDuty first).
 */
export const IncidentToolSettings = z
  .strictObject({ pagerduty: PagerDutySettings.optional(), opsgenie: OpsgenieSettings.optional() })
  .refine((tools) => tools.pagerduty !== undefined || tools.opsgenie !== undefined, "incidentTools needs pagerduty or opsgenie (or both)");
export type IncidentToolSettings = z.infer<typeof IncidentToolSettings>;
