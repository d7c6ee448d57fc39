import { SecretRef } from "@pes/connectors/schemas";
import { z } from "zod";

/** Slack's Web API; GovSlack and tests configure another. */
export const DEFAULT_SLACK_API_URL = "https://slack.com/api/";
/** PagerDuty's REST API. */
export const DEFAULT_PAGERDUTY_API_URL = "https://api.pagerduty.com";
/** Opsgenie's API in its US region; the EU region is `https://api.eu.opsgenie.com`. */
export const DEFAULT_OPSGENIE_API_URL = "https://api.opsgenie.com";

/** A host name as it appears in a link: labels of letters, digits and `-`, compared lower-cased. */
const HOST_NAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;

const apiUrl = (fallback: string) =>
  z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }).default(fallback);

/**
 * `slack:` in an organization file: the Slack app the service reads message links and posts results
 * with. Its bot token is a secret reference, resolved by the worker at start.
 */
export const SlackSettings = z.strictObject({
  /** The app's bot token (`xoxb-…`). */
  botToken: SecretRef,
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
