import type { ServerResponse } from "node:http";
import type { Catalog } from "@pes/config";
import { catalogOf } from "@pes/config/testing";
import type { ExecutionJob } from "@pes/contracts";
import { createEngine, type Engine } from "@pes/engine";
import { sendJson, startRedis, startTestHttpServer, uniquePrefix, type RedisHandle, type TestHttpServer } from "@pes/local-services";
import { createLogger } from "@pes/logger";
import { createRedisQuerySlots, keySpace } from "@pes/jobs";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const logger = createLogger({ name: "data-source-limit-test", level: "silent" });
const LIMIT = 3;
const ACTIONS = 5;

/** Organization acme, whose data source "metrics" allows LIMIT queries at once, and a playbook of ACTIONS queries to it. */
async function catalogAt(url: string): Promise<Catalog> {
  const dataSources = { metrics: { type: "http", url, maxConcurrentQueries: LIMIT } };
  const actions = Array.from({ length: ACTIONS }, (_, index) => ({
    title: `query ${index}`,
    dataSource: "metrics",
    http: { path: `/q/${index}/{{service}}`, answerField: "answer" },
  }));
  return catalogOf({
    organizations: [{ id: "acme", clientIds: ["client-1"], dataSources }],
    playbooks: { acme: [{ name: "Book", requiredAttributes: ["service"], gadgets: [{ title: "Checks", actions }] }] },
  });
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

describe("a data source's maxConcurrentQueries across workers sharing a Redis", () => {
  let redis: RedisHandle;
  let stub: TestHttpServer;
  const connections: Redis[] = [];
  const engines: Engine[] = [];
  // The stub counts the queries it holds. Once LIMIT are held (or no other can come) it answers the oldest a
  // moment later: time enough for a query over the limit, if one were let through, to arrive and be counted.
  const held: ServerResponse[] = [];
  let answered = 0;
  let maxInFlight = 0;
  let expected = 0;
  let answering: NodeJS.Timeout | undefined;
  const answerOldest = () => {
    answering = undefined;
    const oldest = held.shift();
    answered += 1;
    if (oldest !== undefined) sendJson(oldest, 200, { answer: "ok" });
    if (held.length > 0) answerLater();
  };
  const answerLater = () => {
    if (answering === undefined && (held.length >= LIMIT || answered + held.length === expected)) answering = setTimeout(answerOldest, 20);
  };

  beforeAll(async () => {
    redis = await startRedis();
    stub = await startTestHttpServer((_request, response) => {
      held.push(response);
      maxInFlight = Math.max(maxInFlight, held.length);
      answerLater();
    });
    const catalog = await catalogAt(stub.url);
    const keys = keySpace(uniquePrefix("limit"), redis.url);
    // Two workers: each its own engine (MAX_CONCURRENT_ACTIONS well above the limit) and Redis connection.
    for (let worker = 0; worker < 2; worker += 1) {
      const connection = new Redis(redis.url);
      connections.push(connection);
      engines.push(
        createEngine({
          catalog,
          secrets: new Map(),
          logger,
          actionTimeoutMs: 30_000,
          maxConcurrentActions: 16,
          querySlots: createRedisQuerySlots({ redis: connection, keys }),
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

  it("the per-data-source limit observed at the stub: never more than its slots in flight, every query answered", async () => {
    const services = ["a", "b", "c", "d"];
    expected = services.length * ACTIONS;
    const results = await Promise.all(services.map((service, index) => engines[index % 2]?.investigate(job(service)).then(({ result }) => result)));
    expect(results.flatMap((result) => result?.actionResults?.map((action) => action.shortAnswer) ?? [])).toEqual(
      services.flatMap(() => Array.from({ length: ACTIONS }, (_, index) => `query ${index}: ok`)),
    );
    expect(stub.requests).toHaveLength(expected);
    expect(maxInFlight).toBe(LIMIT);
  });
});
