// What Slack and Microsoft Teams receive of an execution whose data sources answered with personal data and
// secrets of every kind (the seeded incident of @pes/local-services): the real engine against a fake Loki
// and a Prometheus-speaking server, then the worker's delivery through the real Slack and Teams clients to
// their fakes, which record every post. Neither holds any sample.
import { catalogOf } from "@pes/config/testing";
import type { ExecutionJob } from "@pes/contracts";
import { createEngine, type Engine } from "@pes/engine";
import { createChannelPacer, createSlackPostClient, createTeamsPostClient } from "@pes/integrations";
import { keySpace } from "@pes/jobs";
import {
  SENSITIVE_INCIDENT_TIME,
  SENSITIVE_SAMPLES,
  sendJson,
  sensitiveErrorLines,
  sensitiveLatencyAnswer,
  startFakeLoki,
  startFakeMicrosoftGraph,
  startFakeSlack,
  startRedis,
  startTestHttpServer,
  uniquePrefix,
  type FakeLoki,
  type FakeMicrosoftGraph,
  type FakeSlack,
  type RedisHandle,
  type TestHttpServer,
} from "@pes/local-services";
import { createLogger } from "@pes/logger";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deliverResult, type DeliveryDeps } from "./result-delivery.js";

const logger = createLogger({ name: "redaction-delivery-test", level: "silent" });
const SLACK_TOKEN = "xoxb-redaction-delivery";
const SLACK_CHANNEL = "C0OPS";
const TEAMS_CHANNEL = "fbe2bf47-16c8-47cf-b4a5-4b9b187c508b/19:ops@thread.tacv2";
const TEAMS = { tenantId: "contoso.onmicrosoft.com", clientId: "11111111-2222-3333-4444-555555555555", clientSecret: "s", refreshToken: "r" };

describe("posts of an execution whose data sources answered with personal data and secrets", () => {
  let redisHandle: RedisHandle;
  let redis: Redis;
  let loki: FakeLoki;
  let prometheus: TestHttpServer;
  let slack: FakeSlack;
  let graph: FakeMicrosoftGraph;
  let engine: Engine;

  beforeAll(async () => {
    redisHandle = await startRedis();
    redis = new Redis(redisHandle.url);
    loki = await startFakeLoki({ streams: [{ labels: { app: "checkout", customer: SENSITIVE_SAMPLES.customer }, entries: sensitiveErrorLines() }] });
    prometheus = await startTestHttpServer((_request, response) => sendJson(response, 200, sensitiveLatencyAnswer()));
    slack = await startFakeSlack({ token: SLACK_TOKEN, channels: { [SLACK_CHANNEL]: {} } });
    graph = await startFakeMicrosoftGraph({ ...TEAMS, channels: [TEAMS_CHANNEL] });
    const organization = {
      id: "acme",
      clientIds: ["c"],
      dataSources: { logs: { type: "loki", url: loki.url }, metrics: { type: "prometheus", url: prometheus.url } },
      redaction: { patterns: [{ name: "employee-id", regex: "EMP-[0-9]{5}" }], labels: ["customer"] },
    };
    const actions = [
      { title: "Error logs of {{service}}", dataSource: "logs", loki: { selector: '{app={{service}}} |= "level=error"' } },
      { title: "Latency of {{service}}", dataSource: "metrics", prometheus: { query: "http_request_duration_seconds{service={{service}}}", unit: "s" } },
    ];
    const catalog = await catalogOf({
      organizations: [organization],
      playbooks: { acme: [{ name: "Checkout errors", requiredAttributes: ["service"], gadgets: [{ title: "Checkout", actions }] }] },
    });
    engine = createEngine({ catalog, secrets: new Map(), logger, actionTimeoutMs: 10_000, maxConcurrentActions: 4 });
  });

  afterAll(async () => {
    await engine?.close();
    await Promise.all([loki?.close(), prometheus?.close(), slack?.close(), graph?.close()]);
    redis?.disconnect();
    await redisHandle?.stop();
  });

  it("sends Slack and Teams none of the samples, and the result they were made from holds none either", async () => {
    const keys = keySpace(uniquePrefix("redaction-delivery"), redisHandle.url);
    const deps: DeliveryDeps = {
      integrations: new Map([
        [
          "acme",
          {
            slack: {
              connection: { token: SLACK_TOKEN, slackApiUrl: slack.apiUrl },
              postClient: createSlackPostClient({ token: SLACK_TOKEN, apiUrl: slack.apiUrl }),
              allowedHosts: [],
            },
            teams: { postClient: createTeamsPostClient({ ...TEAMS, graphUrl: graph.graphUrl, loginUrl: graph.loginUrl }) },
            incidentTools: [],
          },
        ],
      ]),
      redis,
      keys,
      pacer: createChannelPacer({ redis, keys, intervalMs: 1 }),
      teamsPacer: createChannelPacer({ redis, keys, intervalMs: 1, service: "teams" }),
      enqueueBatchItemPost: () => Promise.reject(new Error("no batch here")),
      logger,
    };
    const job: ExecutionJob = {
      v: 1,
      replyTo: "api-1",
      deadline: Date.now() + 60_000,
      orgId: "acme",
      requestId: "req-1",
      bookName: "Checkout errors",
      time: SENSITIVE_INCIDENT_TIME.toISOString(),
      attributes: { service: "checkout" },
      liveRun: false,
    };
    const { result } = await engine.investigate(job);
    const bounds = () => ({ deadline: Date.now() + 10_000, signal: new AbortController().signal });
    const delivery = { orgId: "acme", requestId: "req-1", liveRun: false, attributes: job.attributes };
    await deliverResult(deps, { ...delivery, jobId: "job-slack", channelId: SLACK_CHANNEL }, result, bounds());
    await deliverResult(deps, { ...delivery, jobId: "job-teams", channelId: TEAMS_CHANNEL }, result, bounds());

    expect(slack.posts).toHaveLength(1);
    expect(graph.posts).toHaveLength(1);
    const sent = { result: JSON.stringify(result), slack: JSON.stringify(slack.posts), teams: JSON.stringify(graph.posts) };
    // The posts do carry the findings: their tokens stand where the samples were.
    expect(sent.slack).toContain("«");
    expect(sent.teams).toContain("«");
    for (const [name, sample] of Object.entries(SENSITIVE_SAMPLES)) {
      for (const [where, text] of Object.entries(sent)) expect(text.includes(sample), `${name} in ${where}`).toBe(false);
    }
  }, 60_000);
});
