import { createHash } from "node:crypto";
import { AlertWebhookAccepted, AlertWebhookPayload, AlertWebhookQuery, type StartedAlertExecution } from "@pes/contracts";
import type { Logger } from "@pes/logger";
import { integrationIssues, resolveAlert } from "@pes/playbooks";
import type { ExecutionRequest } from "@pes/executions";
import { callerOrganization, requestTeams } from "../auth/team-requests.js";
import { AppError } from "../errors.js";
import type { Executions } from "../executions.js";
import { prefixIssues } from "../validation.js";
import { HttpReply, organizationRoute, type Route } from "./route.js";

export interface WebhookRouteDeps {
  executions: Pick<Executions, "acceptAlerts">;
  /** Most firing alerts of one notification that start investigations (BATCH_MAX_ITEMS). */
  maxAlerts: number;
  logger: Logger;
  now: () => Date;
}

/**
 * `POST /webhooks/alertmanager`: Alertmanager's and Grafana Alerting's webhook. Each firing alert is
 * resolved like an execution (resolveAlert: playbook from its alertname or summary, attributes from its
 * labels, time from `startsAt`) and submitted without waiting, so the answer comes at once: senders give
 * a webhook a few seconds. Resolved alerts start nothing; alerts that match no playbook, or lack a
 * required attribute, are listed in the answer rather than refused, since a sender cannot act on a 400.
 * For the same reason an organization over its limit of executions in flight is not answered 429: its
 * alerts are accepted and queued behind every other caller's work (Executions.acceptAlerts).
 */
export function webhookRoutes(deps: WebhookRouteDeps): Route[] {
  const logger = deps.logger.child({ component: "alert-webhook" });
  return [
    organizationRoute({
      method: "post",
      path: "/webhooks/alertmanager",
      auth: "organization",
      body: AlertWebhookPayload,
      query: AlertWebhookQuery,
      operation: {
        operationId: "receiveAlertWebhook",
        summary: "Start investigations for the firing alerts of an Alertmanager or Grafana Alerting notification",
        description:
          "Alertmanager's webhook payload (version 4) or Grafana Alerting's webhook contact point payload. Each firing alert " +
          "starts an investigation (or joins an identical one under way); the answer comes before they run. Results go to " +
          "`channelId`, else the organization's `slack.alertChannelId`, else its `teams.alertChannelId`, and are read with `GET /playbook/execution/{id}`. " +
          `At most ${deps.maxAlerts} firing alerts of one notification start investigations; the others are counted in \`skipped\`.`,
        responses: {
          202: { description: "What became of each alert: investigations started or joined, alerts that matched nothing.", body: AlertWebhookAccepted },
        },
      },
      handle: async ({ caller, body, query, requestId }) => {
        const channelIssues = integrationIssues({ channelId: query.channelId }, caller.org);
        if (channelIssues.length > 0) throw new AppError("validation", prefixIssues(channelIssues, ["query"]));
        const channelId = query.channelId ?? caller.org.slack?.alertChannelId ?? caller.org.teams?.alertChannelId;
        const now = deps.now();
        const organization = callerOrganization(caller);

        const accepted: AlertWebhookAccepted = {
          executions: [],
          unmatched: [],
          resolved: 0,
          skipped: 0,
          truncatedAlerts: body.truncatedAlerts ?? 0,
        };
        const requests: ExecutionRequest[] = [];
        const started: Omit<StartedAlertExecution, "executionId" | "joined">[] = [];
        let firing = 0;
        body.alerts.forEach((alert, index) => {
          const reference = { alert: index, ...(alert.fingerprint === undefined ? {} : { fingerprint: alert.fingerprint }) };
          if (alert.status === "resolved") {
            accepted.resolved += 1;
            return;
          }
          firing += 1;
          if (firing > deps.maxAlerts) {
            accepted.skipped += 1;
            return;
          }
          const resolved = resolveAlert(alert, organization, now);
          if (!resolved.ok) {
            const { reason, message } = resolved;
            accepted.unmatched.push(
              resolved.reason === "missing_attributes"
                ? { ...reference, reason, message, bookName: resolved.bookName, missingAttributes: resolved.missing }
                : { ...reference, reason, message },
            );
            return;
          }
          const { bookName, attributes, time, title, details } = resolved.value;
          requests.push({
            orgId: caller.orgId,
            requestId: `${requestId}.${index}`,
            bookName,
            time,
            attributes,
            title,
            ...(details === undefined ? {} : { details }),
            liveRun: false,
            ...(channelId === undefined ? {} : { channelId }),
            teams: requestTeams(caller, bookName),
          });
          started.push({ ...reference, bookName, title });
        });

        if (requests.length > 0) {
          // Alertmanager sends a group's firing alerts again on every group_interval and repeat_interval:
          // each alert's execution id is its occurrence's, so a re-sent alert joins its investigation, also
          // one that finished (for the retention time), instead of running it and posting it again.
          const executionIds = requests.map(alertExecutionId);
          const submitted = await deps.executions.acceptAlerts(caller, requests, executionIds);
          if (submitted.length !== requests.length) {
            throw new Error(`submit answered ${submitted.length} executions for ${requests.length} requests`);
          }
          accepted.executions = submitted.flatMap(({ executionId, joined }, k) => {
            const alert = started[k];
            return alert === undefined ? [] : [{ ...alert, executionId, joined }];
          });
        }
        if (accepted.skipped > 0 || accepted.truncatedAlerts > 0) {
          logger.warn(
            { requestId, orgId: caller.orgId, receiver: body.receiver, skipped: accepted.skipped, truncatedAlerts: accepted.truncatedAlerts },
            "alert notification had more alerts than were investigated",
          );
        }
        return new HttpReply(202, accepted);
      },
    }),
  ];
}

/**
 * The execution id of one alert occurrence, the same in every notification that carries it: a hash of
 * what the investigation is (organization, playbook, attributes, the alert's `startsAt`, the channel
 * posted to), laid out as a UUID (version 8, RFC 9562's for hashes of one's own) so it reads back like
 * any other execution. Only the organization's own alerts can produce it.
 */
function alertExecutionId(request: ExecutionRequest): string {
  const attributes = Object.entries(request.attributes).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  // The teams it runs for only when it runs for some: a team-less caller's ids are those from before teams.
  const teams = request.teams === undefined || request.teams.length === 0 ? [] : [["teams", ...request.teams]];
  const identity = ["alert", request.orgId, request.bookName, attributes, request.time, request.channelId ?? null, ...teams];
  const hex = createHash("sha256").update(JSON.stringify(identity)).digest("hex");
  const variant = ((Number.parseInt(hex.charAt(16), 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
