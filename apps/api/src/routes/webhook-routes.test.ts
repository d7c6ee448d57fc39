import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as delay } from "node:timers/promises";
import { startAlertmanager } from "@pes/local-services";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeExecutionClient, rsaKey, signToken, startJwksServer, testApp, UnavailableExecutionClient, type JwksServer } from "../testing/fixtures.js";

const key = rsaKey("key-1");
const token = signToken({ key });
let jwks: JwksServer;

beforeAll(async () => {
  jwks = await startJwksServer([key.jwk]);
});

afterAll(async () => {
  await jwks.close();
});

function setup(client = new FakeExecutionClient(), limits: Parameters<typeof testApp>[0]["limits"] = {}) {
  const { app } = testApp({ jwksUrl: jwks.url, executionClient: client, limits });
  const webhook = (query = "") => request(app).post(`/webhooks/alertmanager${query}`).set("Authorization", `Bearer ${token}`);
  return { app, client, webhook };
}

/** An Alertmanager webhook notification (payload version 4), as notify/webhook sends it. */
function alertmanagerPayload(alerts: unknown[], extra: Record<string, unknown> = {}) {
  return {
    version: "4",
    groupKey: '{}:{alertname="NodeHighCPU"}',
    truncatedAlerts: 0,
    status: "firing",
    receiver: "playbooks",
    groupLabels: { alertname: "NodeHighCPU" },
    commonLabels: { alertname: "NodeHighCPU" },
    commonAnnotations: {},
    externalURL: "http://alertmanager.test:9093",
    alerts,
    ...extra,
  };
}

function alert(
  status: "firing" | "resolved",
  labels: Record<string, string>,
  annotations: Record<string, string> = {},
  startsAt = "2024-05-01T11:58:00.123456789Z",
) {
  return {
    status,
    labels,
    annotations,
    startsAt,
    endsAt: status === "resolved" ? "2024-05-01T11:59:00Z" : "0001-01-01T00:00:00Z",
    generatorURL: "http://prometheus.test/graph?g0.expr=up",
    fingerprint: `fp-${labels.instance ?? labels.alertname}`,
  };
}

describe("POST /webhooks/alertmanager", () => {
  it("starts an investigation per firing alert, with the playbook, label attributes and startsAt, and none for resolved ones", async () => {
    const { client, webhook } = setup();
    const response = await webhook()
      .set("X-Request-Id", "am-1")
      .send(
        alertmanagerPayload([
          alert("firing", { alertname: "NodeHighCPU", instance: "node-1:9100", job: "node", severity: "page" }, { description: "CPU above 90 %" }),
          alert("resolved", { alertname: "NodeHighCPU", instance: "node-2:9100" }),
          alert("firing", { alertname: "Watchdog" }, { summary: "Always firing" }),
          alert("firing", { alertname: "Other", env: "prod" }, { summary: "High latency on checkout in staging" }, "2024-05-01T13:00:00+02:00"),
        ]),
      );
    expect(response.status).toBe(202);
    expect(response.body).toEqual({
      executions: [
        { alert: 0, fingerprint: "fp-node-1:9100", executionId: expect.any(String), joined: false, bookName: "node-cpu", title: "NodeHighCPU" },
        {
          alert: 3,
          fingerprint: "fp-Other",
          executionId: expect.any(String),
          joined: false,
          bookName: "checkout-latency",
          title: "High latency on checkout in staging",
        },
      ],
      unmatched: [
        {
          alert: 2,
          fingerprint: "fp-Watchdog",
          reason: "no_playbook",
          message: `no playbook's monitor name matches labels.alertname "Watchdog", annotations.summary "Always firing"`,
        },
      ],
      resolved: 1,
      skipped: 0,
      truncatedAlerts: 0,
    });
    const ids = response.body.executions.map((execution: { executionId: string }) => execution.executionId);
    expect(new Set(ids).size).toBe(2);
    expect(ids.every((id: string) => client.executions.get(id)?.orgId === "acme")).toBe(true);
    // Over the organization's limit, alerts are queued behind rather than refused (Alertmanager drops a refused group).
    expect(client.options).toEqual([{ coalesce: true, executionIds: ids, limit: { max: 2_000, over: "behind" } }]);
    expect(client.requests).toEqual([
      {
        orgId: "acme",
        requestId: "am-1.0",
        bookName: "node-cpu",
        time: "2024-05-01T11:58:00.123Z",
        attributes: { instance: "node-1:9100", job: "node" },
        title: "NodeHighCPU",
        details: "CPU above 90 %",
        liveRun: false,
        channelId: "C-ALERTS",
        teams: [],
      },
      {
        orgId: "acme",
        requestId: "am-1.3",
        bookName: "checkout-latency",
        time: "2024-05-01T11:00:00.000Z",
        attributes: { service: "checkout", env: "prod" },
        title: "High latency on checkout in staging",
        liveRun: false,
        channelId: "C-ALERTS",
        teams: [],
      },
    ]);
    // Nothing waits for a result.
    expect(client.timeouts).toEqual([]);
  });

  it("accepts Grafana Alerting's webhook payload", async () => {
    const { client, webhook } = setup();
    const grafana = {
      receiver: "playbooks",
      status: "firing",
      orgId: 1,
      alerts: [
        {
          status: "firing",
          labels: { alertname: "High latency", grafana_folder: "Checkout", service: "checkout" },
          annotations: { summary: "High latency on checkout in prod", description: "p99 above 2 s" },
          startsAt: "2024-05-01T13:51:03.157076+02:00",
          endsAt: "0001-01-01T00:00:00Z",
          generatorURL: "https://grafana.test/alerting/grafana/abc/view",
          fingerprint: "c6eadffa33fcdf37",
          silenceURL: "https://grafana.test/alerting/silence/new?alertmanager=grafana&matcher=alertname%3DHigh+latency",
          dashboardURL: "",
          panelURL: "",
          values: { B: 2.31, C: 1 },
          valueString: "[ var='B' labels={service=checkout} value=2.31 ]",
        },
      ],
      groupLabels: { alertname: "High latency" },
      commonLabels: { alertname: "High latency", service: "checkout" },
      commonAnnotations: {},
      externalURL: "https://grafana.test/",
      version: "1",
      groupKey: '{}/{__grafana_autogenerated__="true"}:{alertname="High latency"}',
      truncatedAlerts: 0,
      title: "[FIRING:1] High latency Checkout (checkout)",
      state: "alerting",
      message: "**Firing**\n\nValue: B=2.31\nLabels:\n - alertname = High latency\n",
    };
    const response = await webhook("?channelId=C-ONCALL").send(grafana);
    expect(response.status).toBe(202);
    expect(response.body.executions).toEqual([
      expect.objectContaining({ alert: 0, fingerprint: "c6eadffa33fcdf37", bookName: "checkout-latency", title: "High latency on checkout in prod" }),
    ]);
    expect(client.requests).toEqual([
      expect.objectContaining({
        bookName: "checkout-latency",
        attributes: { service: "checkout", env: "prod" },
        time: "2024-05-01T11:51:03.157Z",
        details: "p99 above 2 s",
        channelId: "C-ONCALL",
      }),
    ]);
  });

  it("lists a matching alert without a required attribute as unmatched, naming the playbook and the attribute", async () => {
    const { client, webhook } = setup();
    const response = await webhook().send(alertmanagerPayload([alert("firing", { alertname: "NodeHighCPU" })]));
    expect(response.status).toBe(202);
    expect(response.body.unmatched).toEqual([
      {
        alert: 0,
        fingerprint: "fp-NodeHighCPU",
        reason: "missing_attributes",
        bookName: "node-cpu",
        missingAttributes: ["instance"],
        message: expect.stringContaining('requires attribute "instance"'),
      },
    ]);
    expect(response.body.executions).toEqual([]);
    expect(client.requests).toEqual([]);
  });

  it("joins a re-sent alert to its investigation by the id of its occurrence, and tells other occurrences apart", async () => {
    const { webhook } = setup();
    const node1 = alert("firing", { alertname: "NodeHighCPU", instance: "node-1:9100" });
    const first = await webhook().send(alertmanagerPayload([node1]));
    const [started] = first.body.executions;
    expect(started).toMatchObject({
      joined: false,
      executionId: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
    });

    // Alertmanager's next group_interval: the same alert, with another alert of its group and its annotations re-templated.
    const node2 = alert("firing", { alertname: "NodeHighCPU", instance: "node-2:9100" });
    const again = await webhook().send(alertmanagerPayload([{ ...node1, annotations: { description: "CPU at 97 %" } }, node2]));
    expect(again.body.executions).toEqual([
      expect.objectContaining({ alert: 0, executionId: started.executionId, joined: true }),
      expect.objectContaining({ alert: 1, joined: false }),
    ]);
    expect(again.body.executions[1].executionId).not.toBe(started.executionId);

    // Another occurrence (a later startsAt) or another channel is another investigation.
    const later = await webhook().send(alertmanagerPayload([alert("firing", node1.labels, {}, "2024-05-01T12:30:00Z")]));
    const elsewhere = await webhook("?channelId=C-OTHER").send(alertmanagerPayload([node1]));
    expect(later.body.executions[0]).toMatchObject({ joined: false });
    expect(elsewhere.body.executions[0]).toMatchObject({ joined: false });
    expect(new Set([started.executionId, later.body.executions[0].executionId, elsewhere.body.executions[0].executionId]).size).toBe(3);
  });

  it("investigates at most BATCH_MAX_ITEMS firing alerts of a notification and counts the others, with the sender's truncation", async () => {
    const { client, webhook } = setup(new FakeExecutionClient(), { batchMaxItems: 2 });
    const alerts = [1, 2, 3, 4].map((n) => alert("firing", { alertname: "NodeHighCPU", instance: `n${n}` }));
    const response = await webhook().send(
      alertmanagerPayload([alert("resolved", { alertname: "NodeHighCPU", instance: "n0" }), ...alerts], { truncatedAlerts: 7 }),
    );
    expect(response.status).toBe(202);
    expect(response.body).toMatchObject({ resolved: 1, skipped: 2, truncatedAlerts: 7 });
    expect(client.requests.map((request) => ("attributes" in request ? request.attributes : {}))).toEqual([{ instance: "n1" }, { instance: "n2" }]);
  });

  it("posts nowhere for an organization without Slack, and refuses a channelId it cannot post to", async () => {
    const client = new FakeExecutionClient();
    const { app } = testApp({ jwksUrl: jwks.url, executionClient: client });
    const globex = signToken({ key, claims: { org_id: "globex", client_id: "globex-ci" } });
    const payload = alertmanagerPayload([alert("firing", { alertname: "Disk full on db-1" })]);
    const accepted = await request(app).post("/webhooks/alertmanager").set("Authorization", `Bearer ${globex}`).send(payload);
    expect(accepted.status).toBe(202);
    expect(client.requests[0]).not.toHaveProperty("channelId");

    const refused = await request(app).post("/webhooks/alertmanager?channelId=C1").set("Authorization", `Bearer ${globex}`).send(payload);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toEqual([{ path: ["query", "channelId"], message: expect.stringContaining("no Slack app configured") }]);
    expect(client.requests).toHaveLength(1);
  });

  it("needs a token like every endpoint", async () => {
    const { app, client } = setup();
    const response = await request(app)
      .post("/webhooks/alertmanager")
      .send(alertmanagerPayload([alert("firing", { alertname: "NodeHighCPU", instance: "n1" })]));
    expect(response.status).toBe(401);
    expect(response.headers["www-authenticate"]).toMatch(/^Bearer/);
    expect(client.requests).toEqual([]);
  });

  it("answers 400 with the existing error shape for a payload that is not a notification, and starts nothing", async () => {
    const { client, webhook } = setup();
    const noAlerts = await webhook().send({ version: "4", status: "firing", receiver: "x" });
    expect(noAlerts.status).toBe(400);
    expect(noAlerts.body.error).toEqual([{ path: ["body", "alerts"], message: expect.any(String) }]);

    const badAlert = await webhook().send(
      alertmanagerPayload([alert("firing", { alertname: "NodeHighCPU", instance: "n1" }), { status: "firing", labels: { a: 1 }, startsAt: "yesterday" }]),
    );
    expect(badAlert.status).toBe(400);
    expect(badAlert.body.error).toEqual(
      expect.arrayContaining([
        { path: ["body", "alerts", "1", "labels", "a"], message: expect.any(String) },
        { path: ["body", "alerts", "1", "startsAt"], message: "startsAt must be an ISO 8601 date-time with a Z or an offset" },
      ]),
    );

    const badQuery = await webhook("?channelId=").send(alertmanagerPayload([]));
    expect(badQuery.status).toBe(400);
    expect(badQuery.body.error).toEqual([{ path: ["query", "channelId"], message: "channelId must not be empty" }]);

    const unknownQuery = await webhook("?channel=C1").send(alertmanagerPayload([]));
    expect(unknownQuery.status).toBe(400);
    expect(unknownQuery.body.error).toEqual([{ path: ["query", "channel"], message: 'Unknown field "channel"' }]);
    expect(client.requests).toEqual([]);
  });

  it("answers 400 for a startsAt an offset carries outside the years 0000–9999 in UTC, as for any malformed startsAt, and starts nothing", async () => {
    const { client, webhook } = setup();
    const firing = (startsAt: string) => alert("firing", { alertname: "NodeHighCPU", instance: "n1" }, {}, startsAt);
    const response = await webhook().send(
      alertmanagerPayload([firing("2024-05-01T11:58:00Z"), firing("0000-01-01T00:00:00+23:59"), firing("9999-12-31T23:59:59-23:59")]),
    );
    expect(response.status).toBe(400);
    expect(response.body.error).toEqual([
      { path: ["body", "alerts", "1", "startsAt"], message: expect.any(String) },
      { path: ["body", "alerts", "2", "startsAt"], message: expect.any(String) },
    ]);
    expect(client.requests).toEqual([]);
  });

  it("answers 503 when the queue cannot be reached, so that Alertmanager retries", async () => {
    const { webhook } = setup(new UnavailableExecutionClient());
    const response = await webhook().send(alertmanagerPayload([alert("firing", { alertname: "NodeHighCPU", instance: "n1" })]));
    expect(response.status).toBe(503);
  });
});

describe("a real Alertmanager's webhook receiver", () => {
  it("delivers its notification with the configured token, and the alerts are submitted", { timeout: 30_000 }, async () => {
    const client = new FakeExecutionClient();
    const { app } = testApp({ jwksUrl: jwks.url, executionClient: client });
    const server = createServer(app).listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    const alertmanager = await startAlertmanager({
      config: [
        "route: { receiver: playbooks, group_wait: 0s }",
        "receivers:",
        "  - name: playbooks",
        "    webhook_configs:",
        `      - url: http://127.0.0.1:${port}/webhooks/alertmanager?channelId=C-AM`,
        `        http_config: { authorization: { credentials: ${signToken({ key, expiresIn: 600 })} } }`,
        "",
      ].join("\n"),
    });
    try {
      const startsAt = "2024-05-01T11:58:00.123Z";
      await alertmanager.postAlerts([{ labels: { alertname: "NodeHighCPU", instance: "node-1:9100", job: "node" }, startsAt: new Date(startsAt) }]);
      // Bounded by the test's timeout: Alertmanager notifies at once (group_wait 0s).
      while (client.requests.length === 0) await delay(20);
      expect(client.requests).toEqual([
        expect.objectContaining({ bookName: "node-cpu", attributes: { instance: "node-1:9100", job: "node" }, time: startsAt, channelId: "C-AM" }),
      ]);
    } finally {
      await alertmanager.stop();
      server.close();
    }
  });
});
