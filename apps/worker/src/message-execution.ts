import { organizationRunningFor, type Catalog } from "@pes/config";
import { RequestRefusal, type ExecutionJob, type MessageExecutionJob, type PlaybookExecutionResult } from "@pes/contracts";
import type { Engine } from "@pes/engine";
import { fetchLinkedMessage, issueFromSlackMessage } from "@pes/integrations";
import { resolveMessageExecution } from "@pes/playbooks";
import type { OrganizationIntegrations } from "./organization-integrations.js";
import { keepCharts } from "./execution-charts.js";
import { deliverResult, type DeliveryDeps } from "./result-delivery.js";

export interface MessageExecutionDeps {
  catalog: Catalog;
  engine: Pick<Engine, "investigate">;
  integrations: ReadonlyMap<string, OrganizationIntegrations>;
  delivery: DeliveryDeps;
  now?: () => Date;
}

/** Time kept between reading the message and the caller's deadline: the execution needs some too. */
const READ_MARGIN_MS = 1_000;

/**
 * Runs an execution whose issue is the chat message a link points at (EXECUTE_MESSAGE_JOB): reads the
 * message with the organization's Slack token, takes the issue from it (title, attributes, details, the
 * alert's start time), identifies the playbook from it unless `bookName` names one, runs it, and delivers
 * the result (channel post, incident note). A link that leads to no message the app can read, or a
 * message that matches no playbook or lacks a required attribute, is the caller's mistake: a refusal, a
 * 400 on messageLink. Slack being unreachable is not: `{ error }` naming Slack, within the deadline.
 */
export async function executeMessageJob(
  deps: MessageExecutionDeps,
  job: MessageExecutionJob,
  context: { jobId: string; signal: AbortSignal },
): Promise<PlaybookExecutionResult | RequestRefusal> {
  const org = deps.catalog.organizations.get(job.orgId);
  // The API checked both against its own configuration: either missing is drift between the two.
  if (org === undefined) return { error: "Unknown organization" };
  const slack = deps.integrations.get(job.orgId)?.slack;
  if (slack === undefined) {
    return new RequestRefusal([
      { path: ["messageLink"], message: "messageLink needs Slack to read the message: the organization has no Slack app configured" },
    ]);
  }

  const fetched = await fetchLinkedMessage(job.messageLink, {
    connection: slack.connection,
    allowedHosts: slack.allowedHosts,
    now: deps.now?.() ?? new Date(),
    deadline: job.deadline - READ_MARGIN_MS,
    signal: context.signal,
  });
  switch (fetched.outcome) {
    case "invalid_link":
    case "cannot_resolve":
      return new RequestRefusal([{ path: ["messageLink"], message: fetched.reason }]);
    case "slack_unavailable":
      return { error: `Could not read the linked message from Slack: ${fetched.reason}` };
    case "found":
      break;
  }

  const issue = issueFromSlackMessage(fetched.message);
  // Without a named playbook, only one that runs for the teams the caller's execution is kept for (the API
  // checked a named one): what the message leads to is never seen by a team its playbook does not allow.
  const playbooks = job.bookName === undefined && job.teams !== undefined ? organizationRunningFor(job.teams, org) : org;
  const resolved = resolveMessageExecution(issue, job.bookName, playbooks);
  if (!resolved.ok) return new RequestRefusal(resolved.issues);
  const { bookName, attributes, time } = resolved.value;
  const execution: ExecutionJob = {
    v: job.v,
    replyTo: job.replyTo,
    deadline: job.deadline,
    orgId: job.orgId,
    requestId: job.requestId,
    bookName,
    time,
    attributes,
    title: issue.title,
    details: issue.details,
    messageLink: job.messageLink,
    liveRun: job.liveRun,
    ...(job.channelId === undefined ? {} : { channelId: job.channelId }),
    ...(job.batch === undefined ? {} : { batch: job.batch }),
    ...(job.teams === undefined ? {} : { teams: job.teams }),
  };
  const investigation = await deps.engine.investigate(execution, context.signal, context.jobId);
  const charted = { orgId: job.orgId, executionId: context.jobId, requestId: job.requestId, deadline: job.deadline };
  const result = await keepCharts(deps.delivery.charts, charted, investigation, deps.delivery.logger);
  const { link } = fetched;
  return deliverResult(
    deps.delivery,
    {
      jobId: context.jobId,
      orgId: job.orgId,
      requestId: job.requestId,
      liveRun: job.liveRun,
      title: issue.title,
      attributes,
      // A reply's thread is its parent's; a top-level message starts its own.
      source: { channelId: link.channelId, threadTs: link.threadTs ?? link.ts, incidentRefs: issue.incidentRefs },
      ...(job.channelId === undefined ? {} : { channelId: job.channelId }),
      ...(job.batch === undefined ? {} : { batch: job.batch }),
      charts: investigation.charts,
    },
    result,
    { deadline: job.deadline, signal: context.signal },
  );
}
