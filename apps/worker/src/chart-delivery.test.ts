// A channelId run of a real execution (a real Prometheus holding an incident, the engine, the analysis)
// through the worker's job handler: the bottom line and the charts of the findings it cites go in one
// Slack thread (the real @slack/web-api client against the fake Slack, files by the external upload
// flow), the charts' data is kept in Redis as long as the execution, and the result links it all.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Catalog } from "@pes/config";
import { catalogOf } from "@pes/config/testing";
import { ExecutionCharts, type ExecutionJob, type PlaybookExecutionResult } from "@pes/contracts";
import { createEngine, type Engine } from "@pes/engine";
import { createChartStore, EXECUTE_JOB, EXECUTION_JOBS } from "@pes/executions";
import { createChannelPacer, createSlackPostClient } from "@pes/integrations";
import { handleCatalog, keySpace } from "@pes/jobs";
import {
  demoIncidentOpenMetrics,
  startFakeSlack,
  startPrometheus,
  startRedis,
  uniquePrefix,
  type FakeSlack,
  type LocalPrometheus,
  type RedisHandle,
} from "@pes/local-services";
import { createLogger } from "@pes/logger";
import { checkSignedPath } from "@pes/signed-links";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChartSettings } from "./execution-charts.js";
import { createJobHandlers } from "./job-handlers.js";
import type { DeliveryDeps } from "./result-delivery.js";

/** Where the charts Slack got are written, to be looked at after a run (gitignored). */
const ARTIFACTS = fileURLToPath(new URL("../test-artifacts/", import.meta.url));
const logger = createLogger({ name: "chart-delivery-test", level: "silent" });
const TOKEN = "xoxb-chart-delivery";
const CHANNEL = "C0OPS";
const SECRET = "a-link-signing-secret-of-32-chars!!";
const INCIDENT = new Date("2026-11-20T14:05:00Z");
const EXECUTION_ID = "0b9c7f4e-1d7a-4b8e-9f51-5e6f7a8b9c0d";
const P99 = "histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket{service={{service}}}[5m])))";
const ERROR_RATIO = 'sum(rate(http_requests_total{service={{service}}, code=~"5.."}[5m])) / sum(rate(http_requests_total{service={{service}}}[5m]))';
const REQUEST_RATE = "sum(rate(http_requests_total{service={{service}}}[5m]))";

async function catalogAt(prometheusUrl: string, slackApiUrl: string): Promise<Catalog> {
  const organization = {
    id: "acme",
    clientIds: ["client-1"],
    dataSources: { metrics: { type: "prometheus", url: prometheusUrl } },
    slack: { botToken: { env: "SLACK_TOKEN" }, apiUrl: slackApiUrl },
  };
  const actions = [
    { title: "p99 latency", dataSource: "metrics", prometheus: { query: P99, unit: "s" } },
    { title: "error ratio", dataSource: "metrics", prometheus: { query: ERROR_RATIO, unit: "ratio" } },
    { title: "request rate", dataSource: "metrics", prometheus: { query: REQUEST_RATE, unit: "req/s" } },
  ];
  return catalogOf({
    organizations: [organization],
    playbooks: { acme: [{ name: "Checkout", monitorNames: ["Checkout"], requiredAttributes: ["service"], gadgets: [{ title: "Golden signals", actions }] }] },
  });
}

describe("a channelId run with charts", () => {
  let redisHandle: RedisHandle;
  let redis: Redis;
  let prometheus: LocalPrometheus;
  let slack: FakeSlack;
  let engine: Engine;
  let catalog: Catalog;

  beforeAll(async () => {
    redisHandle = await startRedis();
    redis = new Redis(redisHandle.url);
    prometheus = await startPrometheus({ openMetrics: demoIncidentOpenMetrics({ incidentAt: INCIDENT }) });
    slack = await startFakeSlack({ token: TOKEN, channels: { [CHANNEL]: {} } });
    catalog = await catalogAt(prometheus.url, slack.apiUrl);
    engine = createEngine({
      catalog,
      secrets: new Map(),
      logger,
      actionTimeoutMs: 10_000,
      maxConcurrentActions: 8,
      now: () => new Date("2026-11-20T18:00:00Z"),
    });
  }, 60_000);

  afterAll(async () => {
    await engine?.close();
    await slack?.close();
    await prometheus?.stop();
    redis?.disconnect();
    await redisHandle?.stop();
  });

  it("posts the bottom line and the charts it cites in one thread, keeps the charts' data and links them from the result", async () => {
    const prefix = uniquePrefix("charts");
    const keys = keySpace(prefix, redisHandle.url);
    const charts: ChartSettings = {
      store: createChartStore(() => redis, keys),
      retentionMs: 3_600_000,
      publicUrl: "https://pes.example.com",
      signing: { secret: SECRET, lifetimeSeconds: 3_600 },
    };
    const delivery: DeliveryDeps = {
      integrations: new Map([
        [
          "acme",
          {
            slack: {
              connection: { token: TOKEN, slackApiUrl: slack.apiUrl },
              postClient: createSlackPostClient({ token: TOKEN, apiUrl: slack.apiUrl }),
              allowedHosts: [],
            },
            incidentTools: [],
          },
        ],
      ]),
      redis,
      keys,
      pacer: createChannelPacer({ redis, keys, intervalMs: 1 }),
      teamsPacer: createChannelPacer({ redis, keys, intervalMs: 1, service: "teams" }),
      enqueueBatchItemPost: () => Promise.reject(new Error("no batch here")),
      charts,
      logger,
    };
    const handlers = handleCatalog(
      EXECUTION_JOBS,
      createJobHandlers({
        engine,
        catalog,
        integrations: delivery.integrations,
        delivery,
        batchStarts: { run: () => Promise.reject(new Error("no batch here")) },
      }),
    );
    const job: ExecutionJob = {
      v: 1,
      replyTo: "api-1",
      deadline: Date.now() + 60_000,
      orgId: "acme",
      requestId: "req-1",
      bookName: "Checkout",
      time: "2026-11-20T14:08:00Z",
      attributes: { service: "checkout" },
      title: "High latency on <checkout>",
      liveRun: false,
      channelId: CHANNEL,
    };
    const accepted = handlers.find((entry) => entry.name === EXECUTE_JOB.name)?.accept(job);
    if (accepted === undefined || !("run" in accepted)) throw new Error("the catalog refused the job");
    const result = (await accepted.run({ signal: new AbortController().signal, jobId: EXECUTION_ID, attempt: 1 })) as PlaybookExecutionResult;

    // The bottom line cites p99 latency and error ratio (the symptoms); request rate was normal.
    expect(result.verdict?.symptoms.map((symptom) => symptom.action)).toEqual(["p99 latency", "error ratio"]);
    // Every drawn action links its chart; the page is signed for this organization and execution.
    expect(result.actionResults?.map((action) => action.chartUrl)).toEqual(
      [0, 1, 2].map((index) => `https://pes.example.com/playbook/execution/${EXECUTION_ID}/charts/${index}`),
    );
    const page = new URL(result.pageUrl ?? "");
    expect(page.origin + page.pathname).toBe(`https://pes.example.com/view/execution/${EXECUTION_ID}`);
    expect(checkSignedPath(SECRET, page.pathname, EXECUTION_ID, Object.fromEntries(page.searchParams), new Date())).toBe("valid");

    // One thread: the root carries the bottom line (and the page's link); the reply shares the two cited charts as PNG.
    const [root, ...replies] = slack.messages(CHANNEL);
    expect(root?.threadTs).toBeUndefined();
    expect(JSON.stringify(root?.blocks)).toContain(result.highlights?.slice(0, 40) ?? "no highlights");
    expect(JSON.stringify(root?.blocks)).toContain("Investigation page");
    expect(replies).toHaveLength(1);
    const [reply] = replies;
    expect(reply?.threadTs).toBe(root?.ts);
    expect(reply?.files?.map((file) => file.title)).toEqual(["p99 latency", "error ratio"]);
    for (const file of reply?.files ?? []) {
      expect(file.bytes.subarray(1, 4).toString("latin1")).toBe("PNG");
      expect(file.altText).toMatch(/abnormal$/);
    }
    await mkdir(ARTIFACTS, { recursive: true });
    for (const [index, file] of (reply?.files ?? []).entries()) await writeFile(join(ARTIFACTS, `slack-chart-${index + 1}.png`), file.bytes);
    expect(result.enrichmentLink).toMatch(/^https:\/\/acme\.slack\.com\/archives\/C0OPS\/p\d+$/);

    // The charts' data, in one key of the organization, living as long as the execution's record.
    const stored = await redis.keys(`${prefix}:org:*charts:${EXECUTION_ID}`);
    expect(stored).toHaveLength(1);
    const kept = ExecutionCharts.parse(JSON.parse((await redis.get(stored[0] ?? "")) ?? "null"));
    expect(kept.charts.map(({ action, chart }) => [action, chart.title])).toEqual([
      [0, "p99 latency"],
      [1, "error ratio"],
      [2, "request rate"],
    ]);
    const ttl = await redis.pttl(stored[0] ?? "");
    expect(ttl).toBeGreaterThan(3_600_000);
    expect(ttl).toBeLessThanOrEqual(3_600_000 + 60_000);
  }, 60_000);
});
