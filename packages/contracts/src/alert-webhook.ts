import { z } from "zod";
import { executionInputShape } from "./execution-input.js";
import { issueTime } from "./issue-time.js";

const stringMap = z.record(z.string(), z.string());
const alertStatus = z.enum(["firing", "resolved"]);

/**
 * One alert as Alertmanager's webhook (payload version 4) and Grafana Alerting's webhook contact point
 * send it; also what Alertmanager's `POST /api/v2/alerts` takes (`status` and `startsAt` then optional).
 * Fields other tools add (Grafana's `values`, `silenceURL`, `dashboardURL`, `panelURL`, `valueString`,
 * `imageURL`) are accepted and dropped: this is a third party's format, which grows.
 */
export const AlertmanagerAlert = z
  .object({
    status: alertStatus.optional().meta({ description: "`firing` or `resolved`; absent: firing." }),
    labels: stringMap.meta({ description: "The alert's labels: `alertname` and those the playbook's attributes are taken from." }),
    annotations: stringMap.optional().meta({ description: "`summary` is matched against the monitor names after `alertname`." }),
    startsAt: issueTime("startsAt").optional().meta({ description: "When the alert started firing: the issue time. Absent: the time of the request." }),
    endsAt: z.string().optional(),
    generatorURL: z.string().optional(),
    fingerprint: z.string().optional(),
  })
  .meta({ id: "AlertmanagerAlert" });
export type AlertmanagerAlert = z.infer<typeof AlertmanagerAlert>;

/**
 * The body of `POST /webhooks/alertmanager`: Alertmanager's webhook payload (version "4") or Grafana
 * Alerting's (version "1", with `orgId`, `title`, `state`, `message`, which are not used). Every alert of a
 * notification carries `status` and `startsAt`, as both tools always send them.
 */
export const AlertWebhookPayload = z
  .object({
    version: z.string(),
    groupKey: z.string().optional(),
    truncatedAlerts: z.int().nonnegative().optional().meta({ description: "Alerts the sender left out (its `max_alerts`): they start nothing." }),
    status: alertStatus,
    receiver: z.string(),
    groupLabels: stringMap.optional(),
    commonLabels: stringMap.optional(),
    commonAnnotations: stringMap.optional(),
    externalURL: z.string().optional(),
    alerts: z.array(AlertmanagerAlert.required({ status: true, startsAt: true })),
  })
  .meta({ id: "AlertWebhookPayload" });
export type AlertWebhookPayload = z.infer<typeof AlertWebhookPayload>;

/** The query of `POST /webhooks/alertmanager`. */
export const AlertWebhookQuery = z.strictObject({
  channelId: executionInputShape.channelId.meta({
    description: "Chat channel for the results; default: the organization's `slack.alertChannelId`, else its `teams.alertChannelId`, else none.",
  }),
});
export type AlertWebhookQuery = z.infer<typeof AlertWebhookQuery>;

/** Which alert of the payload an entry is about. */
const alertReference = {
  alert: z.int().nonnegative().meta({ description: "The alert's position in `alerts`." }),
  fingerprint: z.string().optional(),
};

/** A firing alert that started an investigation, or joined one already under way for the same issue. */
export const StartedAlertExecution = z
  .object({
    ...alertReference,
    executionId: z.string().meta({ description: "Read the investigation at `GET /playbook/execution/{executionId}`." }),
    joined: z.boolean().meta({ description: "True when an identical investigation was already under way and this alert joined it." }),
    bookName: z.string(),
    title: z.string().meta({ description: "The alert text that matched a monitor name." }),
  })
  .meta({ id: "StartedAlertExecution" });
export type StartedAlertExecution = z.infer<typeof StartedAlertExecution>;

/** A firing alert that started nothing, and why. */
export const UnmatchedAlert = z
  .object({
    ...alertReference,
    reason: z.enum(["no_playbook", "missing_attributes"]),
    message: z.string(),
    bookName: z.string().optional().meta({ description: "With `missing_attributes`: the playbook the alert matched." }),
    missingAttributes: z.array(z.string()).optional(),
  })
  .meta({ id: "UnmatchedAlert" });
export type UnmatchedAlert = z.infer<typeof UnmatchedAlert>;

/** The 202 body of `POST /webhooks/alertmanager`: what became of each alert. */
export const AlertWebhookAccepted = z
  .object({
    executions: z.array(StartedAlertExecution),
    unmatched: z.array(UnmatchedAlert),
    resolved: z.int().nonnegative().meta({ description: "Resolved alerts: they start nothing." }),
    skipped: z.int().nonnegative().meta({ description: "Firing alerts past the per-notification limit (BATCH_MAX_ITEMS): not started." }),
    truncatedAlerts: z.int().nonnegative().meta({ description: "As the sender reported it: alerts it left out of the payload." }),
  })
  .meta({ id: "AlertWebhookAccepted" });
export type AlertWebhookAccepted = z.infer<typeof AlertWebhookAccepted>;
