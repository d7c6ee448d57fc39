import { randomUUID } from "node:crypto";
import { rm } from "node:fs/promises";
import { writeConfigDir } from "@pes/config/testing";
import { sendJson, startTestHttpServer, type TestHttpHandler, type TestHttpServer } from "@pes/local-services";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type Stack } from "../support/stack.js";

/**
 * The secrets sweep: a whole run of the service at LOG_LEVEL=trace against data sources that echo
 * every credential they receive, in success answers, error answers and Prometheus error texts, and a
 * Slack, a PagerDuty and an Opsgenie whose error answers quote the request's credentials. Every
 * configured secret, the credential forms derived from them, and every bearer token a caller sent are
 * then searched for in everything the processes wrote and everything the API answered.
 */

const secrets = {
  bearer: `sweep-bearer-${randomUUID()}`,
  password: `sweep-password-${randomUUID()}`,
  apiKey: `sweep-api-key-${randomUUID()}`,
  slackToken: `xoxb-sweep-${randomUUID()}`,
  pagerdutyToken: `sweep-pd-${randomUUID()}`,
  opsgenieKey: `sweep-og-${randomUUID()}`,
};
/** The Slack message the sweep links to: it names a PagerDuty incident, so that liveRun adds a note. */
const SWEEP_MESSAGE = {
  type: "message",
  user: "U0SWEEP",
  ts: "1714651200.000100",
  text: "Sweep on checkout <https://acme.pagerduty.com/incidents/PSWEEP1|PSWEEP1>",
};
const BASIC_USER = "sweeper";

/** Answers like Prometheus or a JSON API, quoting the request's credentials wherever text goes back. */
const echoingDataSource: TestHttpHandler = (request, response) => {
  const credentials = JSON.stringify({ authorization: request.headers.authorization, apiKey: request.headers["x-api-key"] });
  const url = request.url;
  const json = (status: number, body: unknown) => sendJson(response, status, body);
  if (url.startsWith("/slack/api/")) {
    // Slack's Web API: the linked message reads; every other answer is an error quoting the request.
    const args = new URLSearchParams(request.body);
    if (url === "/slack/api/conversations.history" && args.get("channel") === "C0SWEEP") json(200, { ok: true, messages: [SWEEP_MESSAGE] });
    else json(200, { ok: false, error: `not_in_channel ${credentials}` });
  } else if (url.startsWith("/pagerduty/")) {
    json(400, { error: { message: "Invalid Input Provided", errors: [`seen ${credentials}`] } });
  } else if (url.startsWith("/opsgenie/")) {
    json(422, { message: `Request failed for ${credentials}`, took: 0.01, requestId: "r-1" });
  } else if (url.startsWith("/prom-error/")) {
    // A Prometheus-compatible proxy that quotes the request in its error text.
    json(400, { status: "error", errorType: "bad_data", error: `invalid request ${credentials}` });
  } else if (url.startsWith("/prom-labels/")) {
    // A series whose label carries the credential: the analysis names the series' labels.
    const now = Math.floor(Date.now() / 1000);
    const values = Array.from({ length: 60 }, (_, i) => [now - 3600 + i * 60, i < 50 ? "1" : "50"]);
    json(200, { status: "success", data: { resultType: "matrix", result: [{ metric: { echo: credentials }, values }] } });
  } else if (url.startsWith("/json-error/")) {
    json(500, { error: `failed for ${credentials}` });
  } else {
    json(200, { echo: `seen ${credentials}` });
  }
};

async function writeConfig(dataSourceUrl: string): Promise<string> {
  const organization = `id: acme
clientIds: [quickstart-cli]
dataSources:
  promError:
    type: prometheus
    url: ${dataSourceUrl}/prom-error
    auth: { bearerToken: { env: SWEEP_BEARER } }
  promLabels:
    type: prometheus
    url: ${dataSourceUrl}/prom-labels
    auth: { basic: { username: ${BASIC_USER}, password: { env: SWEEP_PASSWORD } } }
  jsonEcho:
    type: http
    url: ${dataSourceUrl}/json-echo
    headers: { X-Api-Key: { env: SWEEP_API_KEY } }
  jsonError:
    type: http
    url: ${dataSourceUrl}/json-error
    headers: { X-Api-Key: { env: SWEEP_API_KEY } }
slack:
  botToken: { env: SWEEP_SLACK_TOKEN }
  apiUrl: ${dataSourceUrl}/slack/api/
incidentTools:
  pagerduty: { apiToken: { env: SWEEP_PD_TOKEN }, from: sweep@acme.example, apiUrl: ${dataSourceUrl}/pagerduty }
  opsgenie: { apiKey: { env: SWEEP_OPSGENIE_KEY }, apiUrl: ${dataSourceUrl}/opsgenie }
`;
  const playbook = `name: sweep
monitorNames: ["Sweep on {{service}}"]
optionalAttributes: [service]
gadgets:
  - title: "Everything about {{service}}"
    actions:
      - { title: error text, dataSource: promError, prometheus: { query: 'up{service={{service}}}' } }
      - { title: series labels, dataSource: promLabels, prometheus: { query: 'up{service={{service}}}' } }
      - { title: echo, dataSource: jsonEcho, http: { path: "/status/{{service}}", answerField: echo } }
      - { title: echo error, dataSource: jsonError, http: { path: "/status/{{service}}", answerField: echo } }
mitigations:
  - { toolName: Runbook, url: "https://runbooks.example/{{service}}" }
`;
  return writeConfigDir({ organizations: [organization], playbooks: { acme: [playbook] } });
}

let server: TestHttpServer;
let configDir: string;
let stack: Stack;
const answers: string[] = [];
const tokensSent: string[] = [];

/** Sends a request, keeping the token and everything of the answer (status line, headers, body). */
async function call(path: string, init: { method?: string; token?: string; body?: string; contentType?: string } = {}): Promise<Response> {
  const headers: Record<string, string> = {};
  if (init.token !== undefined) {
    headers.authorization = `Bearer ${init.token}`;
    tokensSent.push(init.token);
  }
  if (init.body !== undefined) headers["content-type"] = init.contentType ?? "application/json";
  const response = await fetch(`${stack.baseUrl}${path}`, { method: init.method ?? "GET", headers, body: init.body ?? null });
  const text = await response.text();
  answers.push(`${response.status} ${JSON.stringify([...response.headers])}\n${text}`);
  return new Response(text, { status: response.status, headers: response.headers });
}

beforeAll(async () => {
  server = await startTestHttpServer(echoingDataSource);
  configDir = await writeConfig(server.url);
  stack = await startStack({
    name: "secrets-sweep",
    configDir,
    workers: 1,
    apiEnv: { LOG_LEVEL: "trace" },
    workerEnv: {
      LOG_LEVEL: "trace",
      SWEEP_BEARER: secrets.bearer,
      SWEEP_PASSWORD: secrets.password,
      SWEEP_API_KEY: secrets.apiKey,
      SWEEP_SLACK_TOKEN: secrets.slackToken,
      SWEEP_PD_TOKEN: secrets.pagerdutyToken,
      SWEEP_OPSGENIE_KEY: secrets.opsgenieKey,
    },
  });
});

afterAll(async () => {
  await stack?.stop();
  await server?.close();
  if (configDir !== undefined) await rm(configDir, { recursive: true, force: true });
});

describe("secrets sweep", () => {
  it("no configured secret and no caller's token appears in any log line or any answer", async () => {
    const token = stack.token();
    const execution = JSON.stringify({ bookName: "sweep", attributes: { service: "checkout" } });

    // The data sources really did receive (and echo) the credentials: otherwise the sweep proves nothing.
    const run = await call("/playbook/execution", { method: "POST", token, body: execution });
    expect(run.status).toBe(200);
    const result = (await run.json()) as { actionResults?: { title: string; shortAnswer: string }[] };
    expect(result.actionResults).toHaveLength(4);
    expect(result.actionResults?.map((action) => action.shortAnswer).join("\n")).toContain("[redacted]");

    await call("/playbook/execution", { method: "POST", token, body: JSON.stringify({ title: "Sweep on payments", time: new Date().toISOString() }) });
    await call("/playbook/execution/batch", {
      method: "POST",
      token,
      body: JSON.stringify({ inputList: [JSON.parse(execution), { bookName: "nope" }, { title: "Sweep on web", time: new Date().toISOString() }] }),
    });
    await call("/playbook", { token });

    // Slack and the incident tools: a linked message read, then a post and a note whose refusals quote
    // the credentials; a read whose refusal does; an Opsgenie note (no PagerDuty incident named).
    const linked = await call("/playbook/execution", {
      method: "POST",
      token,
      body: JSON.stringify({ messageLink: "https://acme.slack.com/archives/C0SWEEP/p1714651200000100", channelId: "C0SWEEP", liveRun: true }),
    });
    expect(((await linked.json()) as { error?: string }).error).toMatch(
      /Posting to Slack failed: .*liveRun: adding the note to PagerDuty incident PSWEEP1 failed/,
    );
    await call("/playbook/execution", {
      method: "POST",
      token,
      body: JSON.stringify({ messageLink: "https://acme.slack.com/archives/C0OTHER/p1714651200000100" }),
    });
    const noted = await call("/playbook/execution", {
      method: "POST",
      token,
      body: JSON.stringify({ bookName: "sweep", attributes: { service: "checkout", opsgenie_alias: "sweep-alias" }, liveRun: true }),
    });
    expect(((await noted.json()) as { error?: string }).error).toMatch(/liveRun: adding the note to Opsgenie alert with alias sweep-alias failed/);
    const sent = server.requests.map((request) => request.headers.authorization);
    expect(sent).toEqual(expect.arrayContaining([`Bearer ${secrets.slackToken}`, `Token token=${secrets.pagerdutyToken}`, `GenieKey ${secrets.opsgenieKey}`]));

    // Refused callers: their tokens are never worth logging either.
    const [header = "", payload = "", signature = ""] = token.split(".");
    const forged = `${header}.${payload}.${signature.slice(0, -4)}${signature.endsWith("AAAA") ? "BBBB" : "AAAA"}`;
    expect((await call("/playbook", { token: forged })).status).toBe(401);
    expect((await call("/playbook", { token: stack.token({ org: "ghost" }) })).status).toBe(403);
    expect((await call("/playbook", { token: stack.token({ clientId: "intruder" }) })).status).toBe(403);
    expect((await call("/playbook", { token: `${token}x` })).status).toBe(401);
    expect((await call("/playbook", { token: `not-a-jwt-${randomUUID()}` })).status).toBe(401);
    expect((await call("/playbook/execution", { method: "POST", token, body: '{"bookName": ' })).status).toBe(400);
    expect((await call("/playbook/execution", { method: "POST", token, body: execution, contentType: "text/plain" })).status).toBe(415);

    // Stopped first, so that every line the processes wrote has reached the pipes.
    await Promise.all([stack.api, ...stack.workers].map((service) => service.stop()));
    const everything = [stack.api.output(), ...stack.workers.map((worker) => worker.output()), ...answers].join("\n");
    // Debug lines were written (each action's answer among them): the sweep read what an operator would.
    expect(stack.workers[0]?.output()).toMatch(/"level":20,.*"msg":"action finding"/);

    const needles = new Map<string, string>([
      ["bearer token", secrets.bearer],
      ["basic password", secrets.password],
      ["basic credential as sent", Buffer.from(`${BASIC_USER}:${secrets.password}`).toString("base64")],
      ["API key header", secrets.apiKey],
      ["Slack bot token", secrets.slackToken],
      ["PagerDuty API token", secrets.pagerdutyToken],
      ["Opsgenie API key", secrets.opsgenieKey],
    ]);
    for (const [index, sent] of tokensSent.entries()) {
      needles.set(`token #${index}`, sent);
      const sentSignature = sent.split(".")[2];
      if (sentSignature !== undefined && sentSignature.length >= 16) needles.set(`signature of token #${index}`, sentSignature);
    }
    const leaks = [...needles]
      .filter(([, needle]) => everything.includes(needle))
      .map(([name, needle]) => `${name}: …${everything.slice(Math.max(0, everything.indexOf(needle) - 300), everything.indexOf(needle) + 40)}`);
    expect(leaks).toEqual([]);
  });
});
