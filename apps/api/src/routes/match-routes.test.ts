import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeExecutionClient, rsaKey, signToken, startJwksServer, testApp, type JwksServer } from "../testing/fixtures.js";

const key = rsaKey("key-1");
const token = signToken({ key });
let jwks: JwksServer;

beforeAll(async () => {
  jwks = await startJwksServer([key.jwk]);
});

afterAll(async () => {
  await jwks.close();
});

function setup() {
  const client = new FakeExecutionClient();
  const { app } = testApp({ jwksUrl: jwks.url, executionClient: client });
  return { app, client, match: () => request(app).post("/playbook/match").set("Authorization", `Bearer ${token}`) };
}

describe("POST /playbook/match", () => {
  it("answers which playbook a title would run, the monitor name, why the others did not match, attributes and time; runs nothing", async () => {
    const { client, match } = setup();
    const response = await match().send({ title: "High latency on checkout in prod", time: "2024-05-01T10:00:00+02:00", attributes: { env: "eu" } });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      wouldRun: true,
      issues: [],
      bookName: "checkout-latency",
      chosenBy: "monitorName",
      monitorName: "High latency on {{service}} in {{env}}",
      titles: [
        {
          source: "title",
          text: "High latency on checkout in prod",
          matched: true,
          monitorNames: [
            {
              bookName: "checkout-latency",
              monitorName: "High latency on {{service}} in {{env}}",
              verdict: "chosen",
              reason: "matches, and no other matching name is more specific",
              captured: { service: "checkout", env: "prod" },
            },
            { bookName: "disk-full", monitorName: "Disk full on {{host}}", verdict: "no_match", reason: 'the text does not begin with "Disk full on"' },
            { bookName: "node-cpu", monitorName: "NodeHighCPU", verdict: "no_match", reason: 'the text does not begin with "NodeHighCPU"' },
            {
              bookName: "node-cpu",
              monitorName: "High {{metric}} on {{instance}}",
              verdict: "outranked",
              reason: 'matches too, but "High latency on {{service}} in {{env}}" is more specific (20 literal characters against 9)',
              captured: { metric: "latency", instance: "checkout in prod" },
            },
          ],
        },
      ],
      attributes: { service: { value: "checkout", source: "title" }, env: { value: "eu", source: "explicit" } },
      requiredAttributes: ["service"],
      missingAttributes: [],
      time: "2024-05-01T08:00:00.000Z",
      timeSource: "explicit",
    });
    expect(client.requests).toEqual([]);
    expect(client.requests).toEqual([]);
  });

  it("answers an unmatched title with every monitor name's reason and the 400 the execution would give", async () => {
    const response = await setup().match().send({ title: "Disk full on", time: "2024-05-01T10:00:00Z" });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      wouldRun: false,
      issues: [{ path: ["body", "title"], message: "No playbook's monitor name matches this title" }],
      titles: [
        {
          matched: false,
          monitorNames: [
            { monitorName: "High latency on {{service}} in {{env}}", verdict: "no_match", reason: 'the text does not begin with "High latency on"' },
            { monitorName: "Disk full on {{host}}", verdict: "no_match", reason: "nothing left for {{host}} to capture" },
            { monitorName: "NodeHighCPU", verdict: "no_match", reason: 'the text does not begin with "NodeHighCPU"' },
            { monitorName: "High {{metric}} on {{instance}}", verdict: "no_match", reason: 'the text does not begin with "High"' },
          ],
        },
      ],
      attributes: {},
    });
    expect(response.body.bookName).toBeUndefined();
  });

  it("explains an ambiguous title: the most specific monitor name wins; with bookName, that playbook's own name", async () => {
    const { match } = setup();
    const title = "High CPU on checkout";
    const response = await match().send({ title, time: "2024-05-01T10:00:00Z" });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      wouldRun: true,
      bookName: "node-cpu",
      monitorName: "High {{metric}} on {{instance}}",
      attributes: { metric: { value: "CPU", source: "title" }, instance: { value: "checkout", source: "title" } },
    });
    expect(response.body.titles[0].monitorNames).toEqual([
      expect.objectContaining({ bookName: "checkout-latency", verdict: "no_match", reason: 'the text does not begin with "High latency on"' }),
      expect.objectContaining({ bookName: "disk-full", verdict: "no_match" }),
      expect.objectContaining({ bookName: "node-cpu", monitorName: "NodeHighCPU", verdict: "no_match" }),
      expect.objectContaining({ bookName: "node-cpu", monitorName: "High {{metric}} on {{instance}}", verdict: "chosen" }),
    ]);

    // "High latency on checkout in prod" matches both playbooks; bookName chooses the less specific one.
    const chosen = await match().send({ bookName: "node-cpu", title: "High latency on checkout in prod" });
    expect(chosen.body).toMatchObject({
      wouldRun: true,
      bookName: "node-cpu",
      chosenBy: "bookName",
      monitorName: "High {{metric}} on {{instance}}",
      titles: [{ matched: true, monitorNames: [{ verdict: "no_match" }, { verdict: "chosen" }] }],
      attributes: { instance: { value: "checkout in prod", source: "title" } },
      timeSource: "now",
      time: "2024-05-01T12:00:00.000Z",
    });
    expect(chosen.body.titles[0].monitorNames).toHaveLength(2);
  });

  it("answers for an alert what the webhook would do: alertname, then summary, label attributes, startsAt", async () => {
    const response = await setup()
      .match()
      .send({
        alert: {
          labels: { alertname: "CheckoutSlow", service: "cart", pod: "cart-7f9" },
          annotations: { summary: "High latency on checkout in prod" },
          startsAt: "2024-05-01T11:00:00Z",
        },
      });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      wouldRun: true,
      bookName: "checkout-latency",
      monitorName: "High latency on {{service}} in {{env}}",
      titles: [
        { source: "labels.alertname", text: "CheckoutSlow", matched: false },
        { source: "annotations.summary", matched: true },
      ],
      attributes: { service: { value: "cart", source: "labels" }, env: { value: "prod", source: "title" } },
      ignoredLabels: [
        { name: "alertname", reason: 'not an attribute of playbook "checkout-latency"' },
        { name: "pod", reason: 'not an attribute of playbook "checkout-latency"' },
      ],
      time: "2024-05-01T11:00:00.000Z",
      timeSource: "startsAt",
    });
  });

  it("answers an alert that matches but lacks a required label", async () => {
    const response = await setup()
      .match()
      .send({ alert: { labels: { alertname: "NodeHighCPU" } } });
    expect(response.body).toMatchObject({
      wouldRun: false,
      bookName: "node-cpu",
      missingAttributes: ["instance"],
      issues: [{ path: ["body", "alert", "labels", "instance"] }],
      timeSource: "now",
    });
  });

  it("validates like an execution: 400 for a body the execution would refuse on its shape, and for a message link", async () => {
    const { match } = setup();
    const noTime = await match().send({ title: "Disk full on db-1" });
    expect(noTime.status).toBe(400);
    expect(noTime.body.error).toEqual([{ path: ["body", "time"], message: "time is required when neither bookName nor messageLink is given" }]);

    const mixed = await match().send({ alert: { labels: {} }, title: "x" });
    expect(mixed.status).toBe(400);
    expect(mixed.body.error).toEqual([{ path: ["body", "title"], message: "title cannot be combined with alert: the alert is the whole issue" }]);

    const link = await match().send({ messageLink: "https://acme.slack.com/archives/C1/p1700000000123456" });
    expect(link.status).toBe(400);
    expect(link.body.error).toEqual([{ path: ["body", "messageLink"], message: expect.stringContaining("reads no chat message") }]);

    const typo = await match().send({ titel: "x" });
    expect(typo.status).toBe(400);
    expect(typo.body.error).toContainEqual({ path: ["body", "titel"], message: 'Unknown field "titel"' });
  });

  it("answers 400 for a time or startsAt an offset carries outside the years 0000–9999 in UTC, as the execution and the webhook do", async () => {
    const { match } = setup();
    const answers = [];
    for (const time of ["0000-01-01T00:00:00+23:59", "9999-12-31T23:59:59-23:59"]) {
      const execution = await match().send({ bookName: "disk-full", time });
      const alert = await match().send({ alert: { labels: { alertname: "NodeHighCPU", instance: "n1" }, startsAt: time } });
      answers.push({ status: execution.status, body: execution.body }, { status: alert.status, body: alert.body });
    }
    const refusals = [
      { status: 400, body: { error: [{ path: ["body", "time"], message: expect.any(String) }] } },
      { status: 400, body: { error: [{ path: ["body", "alert", "startsAt"], message: expect.any(String) }] } },
    ];
    expect(answers).toEqual([...refusals, ...refusals]);
  });

  it("needs a token", async () => {
    const { app } = setup();
    const response = await request(app).post("/playbook/match").send({ bookName: "disk-full" });
    expect(response.status).toBe(401);
  });
});
