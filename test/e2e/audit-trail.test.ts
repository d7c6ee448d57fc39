// The audit trail, black-box: the API and a worker as processes, a Prometheus and a deploy API that want
// credentials, and a fake Slack. Executions started by a route, by an alert webhook and by a chat link
// each append one record; an organization's admin reads them back with GET /audit and `pes audit`, and
// proves which queries an alert caused; a member and another organization read nothing.
import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { setTimeout as delay } from "node:timers/promises";
import { runCli } from "@pes/client";
import { writeConfigDir } from "@pes/config/testing";
import { AuditPage, AuditRecord, canonicalJson, type AlertWebhookAccepted, type ExecutionStatus } from "@pes/contracts";
import { sendJson, startFakeSlack, startTestHttpServer, type FakeSlack, type FakeSlackMessage, type TestHttpServer } from "@pes/local-services";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type Stack } from "../support/stack.js";

const SLACK_TOKEN = "xoxb-e2e-audit-slack-token";
const PROMETHEUS_TOKEN = "prom-e2e-audit-bearer-token";
const DEPLOYS_KEY = "deploys-e2e-audit-api-key";
const SECRETS = [SLACK_TOKEN, PROMETHEUS_TOKEN, DEPLOYS_KEY];
const TS = "1714651200.000100";
const MESSAGE_LINK = `https://acme.slack.com/archives/C0ALERTS/p${TS.replace(".", "")}`;

const ALERT_MESSAGE: FakeSlackMessage = {
  type: "message",
  subtype: "bot_message",
  ts: TS,
  bot_id: "B0ALERTMGR",
  username: "AlertManager",
  text: "",
  attachments: [
    {
      title: "[FIRING:1] HighLatency checkout",
      fallback: "[FIRING:1] HighLatency checkout",
      text: ["Labels:", " - alertname = HighLatency", " - service = checkout", "Annotations:", " - summary = High latency on checkout", ""].join("\n"),
    },
  ],
};

const PLAYBOOK = `name: checkout-latency
monitorNames: ["High latency on {{service}}"]
requiredAttributes: [service]
gadgets:
  - title: "Latency of {{service}}"
    actions:
      - title: p99 latency
        dataSource: metrics
        prometheus: { query: 'histogram_quantile(0.99, rate(http_request_duration_seconds_bucket{service={{service}}}[5m]))', unit: s }
  - title: Changes
    actions:
      - title: "Last deploy of {{service}}"
        dataSource: deploys
        http: { path: "/deploys/{{service}}", answerField: version }
`;

let prometheus: TestHttpServer;
let deploys: TestHttpServer;
let slack: FakeSlack;
let dir: string;
let configDir: string;
let stack: Stack;
let auditFile: string;

beforeAll(async () => {
  prometheus = await startTestHttpServer((_request, response) =>
    sendJson(response, 200, {
      status: "success",
      data: { resultType: "matrix", result: [{ metric: { service: "checkout" }, values: [[1714651200, "0.2"]] }] },
    }),
  );
  deploys = await startTestHttpServer((_request, response) => sendJson(response, 200, { version: "v1.2.3" }));
  slack = await startFakeSlack({ token: SLACK_TOKEN, channels: { C0ALERTS: { messages: [ALERT_MESSAGE] }, C0PAGES: {}, C0OPS: {} } });
  dir = await mkdtemp(join(tmpdir(), "pes-audit-e2e-"));
  auditFile = join(dir, "audit.jsonl");
  // The deploy API's URL carries credentials of its own, and it wants a key in a header.
  const deploysUrl = deploys.url.replace("http://", "http://audit-user:url-password-e2e@");
  const dataSources =
    `dataSources:\n  metrics: { type: prometheus, url: "${prometheus.url}", auth: { bearerToken: { env: E2E_PROM_TOKEN } } }\n` +
    `  deploys: { type: http, url: "${deploysUrl}", headers: { x-api-key: { env: E2E_DEPLOYS_KEY } } }\n`;
  const slackSettings = `slack:\n  botToken: { env: E2E_SLACK_TOKEN }\n  apiUrl: ${slack.apiUrl}\n  alertChannelId: C0PAGES\n`;
  configDir = await writeConfigDir({
    organizations: [
      `id: acme\nclientIds: [quickstart-cli, alerting]\n${dataSources}${slackSettings}evidence: { keep: true, retentionDays: 1 }\n`,
      `id: globex\nclientIds: [quickstart-cli]\n${dataSources}`,
    ],
    playbooks: { acme: [PLAYBOOK], globex: [PLAYBOOK] },
  });
  const secrets = { E2E_SLACK_TOKEN: SLACK_TOKEN, E2E_PROM_TOKEN: PROMETHEUS_TOKEN, E2E_DEPLOYS_KEY: DEPLOYS_KEY };
  stack = await startStack({
    name: "audit-trail",
    configDir,
    apiEnv: { ...secrets, EXECUTION_TIMEOUT_MS: "20000" },
    workerEnv: { ...secrets, AUDIT_LOG_FILE: auditFile, SLACK_POST_INTERVAL_MS: "0" },
  });
});

afterAll(async () => {
  await stack?.stop();
  await Promise.all([prometheus?.close(), deploys?.close(), slack?.close()]);
  await rm(dir, { recursive: true, force: true });
  if (configDir !== undefined) await rm(configDir, { recursive: true, force: true });
});

/** What `pes` writes, kept. */
class Buffered {
  text = "";
  write(chunk: string): boolean {
    this.text += chunk;
    return true;
  }
}

const admin = () => stack.token({ subject: "ops-lead", scope: "pes:org-admin" });

async function post(path: string, token: string, body: unknown): Promise<Response> {
  return fetch(`${stack.baseUrl}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

async function audit(token: string, query = ""): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${stack.baseUrl}/audit${query}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: response.status, body: await response.json() };
}

/** Reads an execution back until it has finished (the webhook answers before its executions run). */
async function finished(executionId: string): Promise<ExecutionStatus> {
  for (;;) {
    const response = await fetch(`${stack.baseUrl}/playbook/execution/${executionId}`, { headers: { authorization: `Bearer ${stack.token()}` } });
    const status = (await response.json()) as ExecutionStatus;
    if (status.status === "completed" || status.status === "failed") return status;
    await delay(100);
  }
}

/** The record of an execution, once its worker appended it (it does so right after replying). */
async function recordOf(executionId: string): Promise<AuditRecord> {
  for (;;) {
    const page = AuditPage.parse((await audit(admin(), `?execution=${executionId}`)).body);
    const [record] = page.records;
    if (record !== undefined) return record;
    await delay(50);
  }
}

describe("the audit trail", () => {
  let routeExecution: string;
  let alertExecution: string;
  let chatExecution: string;

  it("records an execution asked for on the route: who asked, the playbook's version, the queries as sent, the Slack post and the evidence's hash", async () => {
    const response = await post("/playbook/execution", stack.token({ subject: "alice" }), {
      bookName: "checkout-latency",
      attributes: { service: "checkout" },
      time: new Date(Date.now() - 60_000).toISOString(),
      channelId: "C0OPS",
    });
    expect(response.status).toBe(200);
    routeExecution = response.headers.get("x-execution-id") ?? "";
    const record = await recordOf(routeExecution);

    expect(record.requestedBy).toEqual({
      subject: "alice",
      clientId: "quickstart-cli",
      teams: [],
      entry: { kind: "route", route: "POST /playbook/execution" },
    });
    expect(record).toMatchObject({ orgId: "acme", outcome: "success", playbook: { name: "checkout-latency" }, issue: { attributes: { service: "checkout" } } });
    expect(record.playbook.version).toMatch(/^sha256:[0-9a-f]{64}$/);
    // Every query as the data sources received it.
    const byAction = new Map(record.queries.map((query) => [query.action, query]));
    expect(byAction.get("Last deploy of checkout")).toMatchObject({
      dataSource: "deploys",
      connector: "http",
      query: { method: "GET", path: "/deploys/checkout" },
    });
    expect(deploys.requests.map((seen) => seen.url)).toContain("/deploys/checkout");
    const promql = JSON.stringify(byAction.get("p99 latency")?.query);
    expect(promql).toContain('service=\\"checkout\\"');
    expect(byAction.get("p99 latency")?.dataSource).toBe("metrics");
    // What went to Slack, request by request, with its size.
    const postMessage = record.sent.find((sent) => sent.url === `${slack.apiUrl}chat.postMessage`);
    expect(postMessage).toMatchObject({ service: "slack", method: "POST", status: 200 });
    expect(postMessage?.bytes).toBeGreaterThan(100);
    // The hash of the evidence bundle the API serves for it.
    const evidence = await (
      await fetch(`${stack.baseUrl}/playbook/execution/${routeExecution}/evidence`, { headers: { authorization: `Bearer ${stack.token()}` } })
    ).json();
    expect(record.evidenceSha256).toBe(createHash("sha256").update(canonicalJson(evidence)).digest("hex"));
    // No credential of any data source or of Slack, anywhere in it.
    const text = JSON.stringify(record);
    for (const secret of [...SECRETS, "url-password-e2e", "audit-user"]) expect(text).not.toContain(secret);
  });

  it("records an alert webhook's execution with its sender and alert, and proves which queries the alert caused", async () => {
    const response = await post("/webhooks/alertmanager", stack.token({ clientId: "alerting", subject: "alertmanager" }), {
      version: "4",
      groupKey: '{}:{alertname="HighLatency"}',
      status: "firing",
      receiver: "pes",
      externalURL: "http://am-user:am-password@alertmanager.example:9093",
      alerts: [
        {
          status: "firing",
          labels: { alertname: "HighLatency", service: "checkout" },
          annotations: { summary: "High latency on checkout" },
          startsAt: new Date(Date.now() - 120_000).toISOString(),
          fingerprint: "fp-checkout",
        },
      ],
    });
    expect(response.status).toBe(202);
    const accepted = (await response.json()) as AlertWebhookAccepted;
    alertExecution = accepted.executions[0]?.executionId ?? "";
    await finished(alertExecution);
    const record = await recordOf(alertExecution);

    expect(record.requestedBy).toEqual({
      subject: "alertmanager",
      clientId: "alerting",
      teams: [],
      entry: {
        kind: "alert-webhook",
        route: "POST /webhooks/alertmanager",
        sender: "alertmanager",
        receiver: "pes",
        groupKey: '{}:{alertname="HighLatency"}',
        externalUrl: "http://alertmanager.example:9093/",
        alert: { index: 0, fingerprint: "fp-checkout", alertname: "HighLatency" },
      },
    });
    expect(record.queries.map((query) => query.action).sort()).toEqual(["Last deploy of checkout", "p99 latency"]);
    // Posted to the organization's alert channel.
    expect(record.sent.some((sent) => sent.service === "slack" && sent.url.endsWith("/chat.postMessage"))).toBe(true);
    expect(JSON.stringify(record)).not.toContain("am-password");
  });

  it("records a chat link's execution with the link, and the playbook the worker resolved from the message", async () => {
    const response = await post("/playbook/execution", stack.token({ subject: "bob" }), { messageLink: MESSAGE_LINK });
    expect(response.status).toBe(200);
    chatExecution = response.headers.get("x-execution-id") ?? "";
    const record = await recordOf(chatExecution);

    expect(record.requestedBy?.entry).toEqual({ kind: "chat-link", route: "POST /playbook/execution", messageLink: MESSAGE_LINK });
    expect(record).toMatchObject({ outcome: "success", playbook: { name: "checkout-latency" }, issue: { attributes: { service: "checkout" } } });
    expect(record.queries).toHaveLength(2);
    // Reading the message is a request to Slack too.
    expect(record.sent.map((sent) => sent.url)).toContain(`${slack.apiUrl}conversations.history`);
  });

  it("lets an admin page and filter the records, and `pes audit` print them; a member and another organization read nothing", async () => {
    const all = AuditPage.parse((await audit(admin())).body);
    expect(all.records.map((record) => record.executionId)).toEqual([chatExecution, alertExecution, routeExecution]);
    const first = AuditPage.parse((await audit(admin(), "?limit=2")).body);
    const rest = AuditPage.parse((await audit(admin(), `?limit=2&cursor=${first.next}`)).body);
    expect([...first.records, ...rest.records].map((record) => record.executionId)).toEqual([chatExecution, alertExecution, routeExecution]);
    expect(AuditPage.parse((await audit(admin(), "?subject=alice")).body).records.map((record) => record.executionId)).toEqual([routeExecution]);

    const member = await audit(stack.token({ subject: "alice" }));
    expect(member.status).toBe(403);
    expect(member.body).not.toHaveProperty("records");
    const globex = await audit(stack.token({ org: "globex", subject: "root", scope: "pes:org-admin" }), `?execution=${alertExecution}`);
    expect(globex).toEqual({ status: 200, body: { records: [] } });

    const stdout = new Buffered();
    const stderr = new Buffered();
    const env = { PES_URL: stack.baseUrl, PES_TOKEN: admin() };
    const code = await runCli(["audit", "--execution", alertExecution, "--json"], { stdout, stderr, env, stdin: Readable.from([]) });
    expect(code).toBe(0);
    expect(AuditPage.parse(JSON.parse(stdout.text)).records.map((record) => record.executionId)).toEqual([alertExecution]);
  });

  it("appends each record to AUDIT_LOG_FILE as one JSON line, as the stream holds it", async () => {
    const lines = (await readFile(auditFile, "utf8")).trim().split("\n");
    const records = lines.map((line) => AuditRecord.parse(JSON.parse(line)));
    expect(records.map((record) => record.executionId)).toEqual([routeExecution, alertExecution, chatExecution]);
    const inStream = AuditPage.parse((await audit(admin())).body).records.find((record) => record.executionId === alertExecution);
    const { id: _id, ...streamed } = inStream ?? { id: "" };
    expect(records[1]).toEqual(AuditRecord.parse(streamed));
  });
});
