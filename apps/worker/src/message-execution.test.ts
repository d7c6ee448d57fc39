// An execution whose issue is a linked chat message, read through the real Slack client from a local
// server speaking conversations.history, resolved against a real configuration; the engine records the
// job it is given (what the message made of the issue) instead of querying data sources.
import type { Catalog } from "@pes/config";
import { catalogOf } from "@pes/config/testing";
import { RequestRefusal, type ExecutionJob, type MessageExecutionJob } from "@pes/contracts";
import { createSlackPostClient } from "@pes/integrations";
import { createLogger } from "@pes/logger";
import { startFakeSlack, type FakeSlack } from "@pes/local-services";
import { keySpace } from "@pes/jobs";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { executeMessageJob, type MessageExecutionDeps } from "./message-execution.js";
import type { OrganizationIntegrations } from "./organization-integrations.js";

const TOKEN = "xoxb-message-execution-test";
const TS = "1714651200.000100";
const LINK = `https://acme.slack.com/archives/C0ALERTS/p${TS.replace(".", "")}`;

/**
 * PagerDuty's Slack app posting an incident whose title names the service as the monitor name has it,
 * while its Service field names the PagerDuty service (`checkout-prod`), which Prometheus does not know.
 */
const PAGERDUTY_MESSAGE = {
  type: "message",
  subtype: "bot_message",
  ts: TS,
  bot_id: "B0PAGERDUTY",
  bot_profile: { name: "PagerDuty" },
  text: "",
  attachments: [
    {
      fallback: "Triggered: [#1234] High latency on checkout in prod",
      title: "[#1234] High latency on checkout in prod",
      title_link: "https://acme.pagerduty.com/incidents/Q2W3E4R5T6Y7U8",
      fields: [
        { title: "Status", value: "Triggered", short: true },
        { title: "Urgency", value: "High", short: true },
        { title: "Service", value: "<https://acme.pagerduty.com/service-directory/PSVC123|checkout-prod>", short: true },
      ],
    },
  ],
};

let slack: FakeSlack;
let catalog: Catalog;
const redis = new Redis({ lazyConnect: true });

beforeAll(async () => {
  slack = await startFakeSlack({ token: TOKEN, channels: { C0ALERTS: { messages: [PAGERDUTY_MESSAGE] } } });
  const organization = {
    id: "acme",
    clientIds: ["client-1"],
    dataSources: { metrics: { type: "prometheus", url: "http://127.0.0.1:9" } },
    slack: { botToken: { env: "UNUSED_SLACK_TOKEN" } },
  };
  const playbook = {
    name: "checkout-latency",
    monitorNames: ["High latency on {{service}} in {{env}}"],
    requiredAttributes: ["service"],
    optionalAttributes: ["urgency", "pagerduty_incident_id"],
    teams: ["payments"],
    gadgets: [
      {
        title: "Latency",
        actions: [
          { title: "p99 of {{service}} ({{urgency}}, {{pagerduty_incident_id}})", dataSource: "metrics", prometheus: { query: "up{service={{service}}}" } },
        ],
      },
    ],
  };
  catalog = await catalogOf({ organizations: [organization], playbooks: { acme: [playbook] } });
});

afterAll(async () => {
  await slack.close();
  redis.disconnect();
});

function deps(executed: ExecutionJob[]): MessageExecutionDeps {
  const { apiUrl } = slack;
  const integrations = new Map<string, OrganizationIntegrations>([
    [
      "acme",
      {
        slack: { connection: { token: TOKEN, slackApiUrl: apiUrl }, postClient: createSlackPostClient({ token: TOKEN, apiUrl }), allowedHosts: [] },
        incidentTools: [],
      },
    ],
  ]);
  return {
    catalog,
    integrations,
    engine: {
      investigate: async (job) => {
        executed.push(job);
        return { result: { highlights: "recorded" }, charts: new Map() };
      },
    },
    // Neither channelId nor liveRun: nothing is delivered, so Redis is never connected.
    delivery: {
      integrations,
      redis,
      keys: keySpace("unused", "redis://127.0.0.1"),
      pacer: { waitForSlot: async () => false, holdOff: async () => {} },
      teamsPacer: { waitForSlot: async () => false, holdOff: async () => {} },
      enqueueBatchItemPost: async () => {},
      logger: createLogger({ name: "message-execution-test", level: "silent" }),
    },
  };
}

const job = (): MessageExecutionJob => ({
  v: 1,
  replyTo: "api-1",
  deadline: Date.now() + 30_000,
  orgId: "acme",
  requestId: "req-1",
  messageLink: LINK,
  liveRun: false,
});

describe("executeMessageJob", () => {
  it("keeps the title's captures over PagerDuty's fields, fills a declared attribute from a field, and gives the linked incident's id", async () => {
    const executed: ExecutionJob[] = [];
    const result = await executeMessageJob(deps(executed), job(), { jobId: "job-1", signal: new AbortController().signal });

    expect(result).toEqual({ highlights: "recorded" });
    expect(executed.map((execution) => [execution.bookName, execution.attributes])).toEqual([
      ["checkout-latency", { service: "checkout", env: "prod", urgency: "High", pagerduty_incident_id: "Q2W3E4R5T6Y7U8" }],
    ]);
  });

  it("identifies the playbook only among those that run for the teams its job runs for, and runs it for them", async () => {
    const refused: ExecutionJob[] = [];
    const signal = new AbortController().signal;
    // checkout-latency is payments' alone: for search, the message matches no playbook, as one of no playbook.
    const answer = await executeMessageJob(deps(refused), { ...job(), teams: ["search"] }, { jobId: "job-2", signal });
    expect(answer).toBeInstanceOf(RequestRefusal);
    expect(refused).toEqual([]);

    const executed: ExecutionJob[] = [];
    await executeMessageJob(deps(executed), { ...job(), teams: ["payments"] }, { jobId: "job-3", signal });
    expect(executed.map((execution) => [execution.bookName, execution.teams])).toEqual([["checkout-latency", ["payments"]]]);
  });
});
