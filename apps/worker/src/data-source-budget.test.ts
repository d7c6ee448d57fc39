import type { Catalog } from "@pes/config";
import { catalogOf } from "@pes/config/testing";
import type { ExecutionJob, PlaybookExecutionResult } from "@pes/contracts";
import { createEngine, type Engine } from "@pes/engine";
import { createRedisQuerySlots, keySpace, queryMinuteKey } from "@pes/jobs";
import { sendJson, startRedis, startTestHttpServer, uniquePrefix, type RedisHandle, type TestHttpServer } from "@pes/local-services";
import { createLogger } from "@pes/logger";
import { createWorkerMetrics, type WorkerMetrics } from "@pes/metrics";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const logger = createLogger({ name: "data-source-budget-test", level: "silent" });
/** The organization's queries per minute on each of its data sources. */
const PER_MINUTE = 6;
const ALERTS = 12;

/**
 * Organization acme, whose budget allows PER_MINUTE queries a minute on each data source, with two data
 * sources on one stub; its playbook asks "metrics" twice and "deploys" once per alert.
 */
async function catalogAt(url: string): Promise<Catalog> {
  const organization = {
    id: "acme",
    clientIds: ["client-1"],
    dataSources: { metrics: { type: "http", url }, deploys: { type: "http", url } },
    budget: { dataSourceQueriesPerMinute: PER_MINUTE },
  };
  const action = (title: string, dataSource: string, path: string) => ({ title, dataSource, http: { path, answerField: "answer" } });
  const playbook = {
    name: "Book",
    requiredAttributes: ["service"],
    gadgets: [
      {
        title: "Checks",
        actions: [
          action("errors of {{service}}", "metrics", "/metrics/errors/{{service}}"),
          action("latency of {{service}}", "metrics", "/metrics/latency/{{service}}"),
          action("deploys of {{service}}", "deploys", "/deploys/{{service}}"),
        ],
      },
    ],
  };
  return catalogOf({ organizations: [organization], playbooks: { acme: [playbook] } });
}

function job(service: string): ExecutionJob {
  return {
    orgId: "acme",
    requestId: `req-${service}`,
    v: 1,
    replyTo: "api-1",
    deadline: Date.now() + 60_000,
    bookName: "Book",
    time: "2026-11-20T14:08:00Z",
    attributes: { service },
    liveRun: false,
  };
}

/** A counter's values summed over the workers, by their labels joined with `/`. */
async function summed(workers: readonly WorkerMetrics[], name: string): Promise<Record<string, number>> {
  const sums: Record<string, number> = {};
  for (const metrics of workers) {
    for (const { labels, value } of (await metrics.registry.getSingleMetric(name)?.get())?.values ?? []) {
      const key = Object.values(labels).join("/");
      sums[key] = (sums[key] ?? 0) + value;
    }
  }
  return sums;
}

/** The actions of the results a budget stopped, by that budget. */
function unchecked(results: readonly PlaybookExecutionResult[]) {
  return results.flatMap((result) => result.verdict?.unchecked ?? []);
}

describe("an organization's queries per minute on a data source, across the executions of workers sharing a Redis", () => {
  let redis: RedisHandle;
  let stub: TestHttpServer;
  const connections: Redis[] = [];
  const engines: Engine[] = [];
  const metrics: WorkerMetrics[] = [];
  let keys: ReturnType<typeof keySpace>;

  beforeAll(async () => {
    redis = await startRedis();
    stub = await startTestHttpServer((_request, response) => sendJson(response, 200, { answer: "ok" }));
    const catalog = await catalogAt(stub.url);
    keys = keySpace(uniquePrefix("budget"), redis.url);
    // Two workers: each its own engine, Redis connection and metrics, as separate processes have.
    for (let worker = 0; worker < 2; worker += 1) {
      const connection = new Redis(redis.url);
      const workerMetrics = createWorkerMetrics({ jobNames: [] });
      connections.push(connection);
      metrics.push(workerMetrics);
      engines.push(
        createEngine({
          catalog,
          secrets: new Map(),
          logger,
          actionTimeoutMs: 30_000,
          maxConcurrentActions: 16,
          querySlots: createRedisQuerySlots({ redis: connection, keys }),
          onActionFinished: (report) => workerMetrics.actionFinished(report),
          onBudgetSettled: (orgId, budget) => workerMetrics.budgetSettled(orgId, budget),
        }),
      );
    }
  });
  afterAll(async () => {
    await Promise.all(engines.map((engine) => engine.close()));
    await Promise.all(connections.map((connection) => connection.quit()));
    await stub?.close();
    await redis?.stop();
  });

  it("lets a storm of alerts start no more than the minute's queries on each data source; the rest are unchecked, counted and in the results", async () => {
    const services = Array.from({ length: ALERTS }, (_, index) => `service-${index}`);
    const results = await Promise.all(services.map((service, index) => engines[index % 2]?.investigate(job(service)).then(({ result }) => result)));
    const done = results.filter((result): result is PlaybookExecutionResult => result !== undefined);
    expect(done).toHaveLength(ALERTS);

    // What the data sources saw: the minute's budget on each, no more.
    const paths = stub.requests.map(({ url }) => url.split("/")[1]);
    expect(paths.filter((path) => path === "metrics")).toHaveLength(PER_MINUTE);
    expect(paths.filter((path) => path === "deploys")).toHaveLength(PER_MINUTE);
    // Every query counted in Redis reached its data source.
    const admin = connections[0];
    expect(await admin?.zcard(queryMinuteKey(keys, "acme/metrics"))).toBe(PER_MINUTE);
    expect(await admin?.zcard(queryMinuteKey(keys, "acme/deploys"))).toBe(PER_MINUTE);

    // Each refused query is an unchecked action saying why, never an error.
    const refusedMetrics = 2 * ALERTS - PER_MINUTE;
    const refusedDeploys = ALERTS - PER_MINUTE;
    expect(done.filter((result) => result.error !== undefined)).toEqual([]);
    const stopped = unchecked(done);
    expect(stopped).toHaveLength(refusedMetrics + refusedDeploys);
    expect(new Set(stopped.map((entry) => JSON.stringify({ ...entry, action: "" })))).toEqual(
      new Set([JSON.stringify({ action: "", reason: "failed", error: "data-source budget per minute reached", budget: "data-source-per-minute" })]),
    );
    // The results say where: their budgets' refusals add up to the refused queries, and their verdicts are partial.
    const refusedIn = (dataSource: string) => done.reduce((sum, result) => sum + (result.budget?.refused?.[dataSource] ?? 0), 0);
    expect({ metrics: refusedIn("metrics"), deploys: refusedIn("deploys") }).toEqual({ metrics: refusedMetrics, deploys: refusedDeploys });
    for (const result of done) {
      const count = (result.verdict?.unchecked ?? []).length;
      expect(result.verdict?.partial).toEqual(count === 0 ? undefined : { budgets: ["data-source-per-minute"] });
      // A refusal is not a query spent: each result's queries are those that reached the data sources.
      expect(result.budget?.spent.queries).toBe(3 - count);
    }
    // And so do the workers' metrics.
    expect(await summed(metrics, "pes_budget_refusals_total")).toEqual({ "acme/metrics": refusedMetrics, "acme/deploys": refusedDeploys });
    expect((await summed(metrics, "pes_budget_spent_total"))["acme/queries"]).toBe(2 * PER_MINUTE);
    expect(await summed(metrics, "pes_actions_total")).toEqual({
      "acme/http/metrics/ok": PER_MINUTE,
      "acme/http/metrics/budget": refusedMetrics,
      "acme/http/deploys/ok": PER_MINUTE,
      "acme/http/deploys/budget": refusedDeploys,
    });
  });

  it("fails the query, saying why, when the minute cannot be counted: a Redis it cannot reach starts nothing unbudgeted", async () => {
    const unreachable = new Redis(redis.url, { lazyConnect: true, enableOfflineQueue: false });
    const catalog = await catalogAt(stub.url);
    const engine = createEngine({
      catalog,
      secrets: new Map(),
      logger,
      actionTimeoutMs: 30_000,
      maxConcurrentActions: 4,
      querySlots: createRedisQuerySlots({ redis: unreachable, keys }),
    });
    try {
      const before = stub.requests.length;
      const { result } = await engine.investigate(job("service-unreachable"));
      expect(stub.requests).toHaveLength(before);
      const entries = result.verdict?.unchecked ?? [];
      expect(entries.map(({ action, reason }) => ({ action, reason }))).toEqual(
        ["errors", "latency", "deploys"].map((what) => ({ action: `${what} of service-unreachable`, reason: "failed" })),
      );
      // A failure to count is not a budget: no refusal, no partial verdict.
      expect(entries.filter((entry) => entry.reason === "failed" && entry.budget !== undefined)).toEqual([]);
      expect(result.verdict?.partial).toBeUndefined();
      expect(result.budget).toMatchObject({ spent: { queries: 0 } });
      expect(result.budget?.refused).toBeUndefined();
    } finally {
      await engine.close();
      unreachable.disconnect();
    }
  });
});
