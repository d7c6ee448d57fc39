// The service on a Redis Cluster, black-box: API and worker processes given a redis+cluster:// URL of a
// local cluster (three masters, one replica each): executions, coalescing, an async batch and an
// organization's limit, and a master killed under executions in flight.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedisCluster, type RedisClusterHandle, type TestHttpServer } from "@pes/local-services";
import { startHoldingPrometheus } from "../support/holding-prometheus.js";
import { exampleConfig, startStack, type Stack } from "../support/stack.js";

const run = promisify(execFile);

// checkout-latency has three Prometheus actions: one execution = three queries at the data source.
const ACTIONS = 3;
/** The organization's limit on batch items queued, and a batch that fits it. */
const ITEMS_QUEUED = 60;
const BATCH_ITEMS = 50;
const input = { bookName: "checkout-latency", attributes: { service: "checkout", env: "production" }, time: "2026-11-21T13:43:00Z" };

let cluster: RedisClusterHandle;
let prometheus: TestHttpServer;
let config: Awaited<ReturnType<typeof exampleConfig>>;
let stack: Stack;

beforeAll(async () => {
  cluster = await startRedisCluster();
  prometheus = await startHoldingPrometheus();
  config = await exampleConfig({ metrics: prometheus.url });
  stack = await startStack({
    name: "redis-cluster",
    configDir: config.dir,
    apis: 2,
    workers: 2,
    redis: cluster,
    // A caller's deadline well past a failover (node timeout 2 s, then the election), and short of the test's timeout.
    // Room for one batch of BATCH_ITEMS queued, not for a second one beside it.
    apiEnv: { EXECUTION_TIMEOUT_MS: "40000", ORG_ITEMS_QUEUED: String(ITEMS_QUEUED) },
  });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await cluster?.stop();
  await prometheus?.close();
  await config?.remove();
});

interface Answer {
  status: number;
  executionId: string | null;
  location: string | null;
  body: string;
}

async function execute(baseUrl: string, headers: Record<string, string> = {}, body: unknown = input): Promise<Answer> {
  const response = await fetch(`${baseUrl}/playbook/execution`, {
    method: "POST",
    headers: { authorization: `Bearer ${stack.token()}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return {
    status: response.status,
    executionId: response.headers.get("x-execution-id"),
    location: response.headers.get("location"),
    body: await response.text(),
  };
}

/** pes_executions_coalesced_total summed over the APIs' /metrics. */
async function coalesced(): Promise<number> {
  const counts = await Promise.all(
    stack.baseUrls.map(async (url) => {
      const text = await (await fetch(`${url}/metrics`)).text();
      return Number(/^pes_executions_coalesced_total (\d+)/m.exec(text)?.[1] ?? Number.NaN);
    }),
  );
  return counts.reduce((sum, count) => sum + count, 0);
}

/** The keys matching `pattern` on every master of the cluster. */
async function keysOnMasters(pattern: string): Promise<string[]> {
  const keys = await Promise.all(
    cluster.nodes.map(async (node) => {
      try {
        const role = (await run("redis-cli", ["-p", String(node.port), "ROLE"])).stdout.split("\n")[0];
        if (role !== "master") return [];
        return (await run("redis-cli", ["-p", String(node.port), "--scan", "--pattern", pattern])).stdout.split("\n").filter((key) => key !== "");
      } catch {
        // A node the failover test killed.
        return [];
      }
    }),
  );
  return keys.flat();
}

describe("the service on a Redis Cluster", () => {
  it("runs an execution: its record under its organization's hash tag, the queues under the prefix's", { timeout: 60_000 }, async () => {
    const answer = await execute(stack.baseUrl, { "cache-control": "no-cache" });

    expect(answer.status).toBe(200);
    const result = JSON.parse(answer.body) as { highlights?: string; error?: string };
    expect(result.error).toBeUndefined();
    expect(result.highlights).toEqual(expect.any(String));
    const id = answer.executionId ?? "";
    expect(await keysOnMasters(`${stack.prefix}:org:*:execution:*`)).toContain(`${stack.prefix}:org:{acme}:execution:${id}`);
    expect(await keysOnMasters(`{${stack.prefix}}:playbook-executions:*`)).toContain(`{${stack.prefix}}:playbook-executions:id`);
    // The record's slot is its organization's (its hash tag), not the prefix's: organizations spread over the masters.
    const slotOf = async (key: string) => (await run("redis-cli", ["-p", String(cluster.nodes[0]?.port), "CLUSTER", "KEYSLOT", key])).stdout.trim();
    expect(await slotOf(`${stack.prefix}:org:{acme}:execution:${id}`)).toBe(await slotOf("acme"));
  });

  it("answers an asynchronous execution at once and gives its result back through the other API", { timeout: 60_000 }, async () => {
    const [first, second] = stack.baseUrls;
    const accepted = await execute(first ?? "", { prefer: "respond-async", "cache-control": "no-cache" });
    expect(accepted.status).toBe(202);
    expect(accepted.location).toBe(`/playbook/execution/${accepted.executionId}`);

    let view: { status?: string; result?: { highlights?: string } } = {};
    while (view.status !== "completed" && view.status !== "failed") {
      const response = await fetch(`${second}${accepted.location}`, { headers: { authorization: `Bearer ${stack.token()}` } });
      expect(response.status).toBe(200);
      view = (await response.json()) as typeof view;
      if (view.status !== "completed") await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(view.status).toBe("completed");
    expect(view.result?.highlights).toEqual(expect.any(String));
  });

  it("coalesces identical concurrent requests through both APIs into one execution", { timeout: 60_000 }, async () => {
    prometheus.hold();
    const before = prometheus.requests.length;
    const body = { ...input, attributes: { ...input.attributes, env: "coalesced" } };
    const answers = Promise.all(Array.from({ length: 40 }, (_, i) => execute(stack.baseUrls[i % 2] ?? "", {}, body)));
    await prometheus.waitForRequests(before + ACTIONS);
    // Every other request joined (counted by the APIs) before the one execution may finish.
    while ((await coalesced()) < 39) await new Promise((resolve) => setTimeout(resolve, 50));
    prometheus.release();

    const all = await answers;
    expect(all.map((answer) => answer.status)).toEqual(all.map(() => 200));
    expect(new Set(all.map((answer) => answer.executionId)).size).toBe(1);
    expect(new Set(all.map((answer) => answer.body)).size).toBe(1);
    expect(prometheus.requests.length - before).toBe(ACTIONS);
  });

  it("runs an async batch to completion and answers 429 at the organization's limit, counted across both APIs", { timeout: 120_000 }, async () => {
    const [first, second] = stack.baseUrls;
    const startBatch = (baseUrl: string, count: number, name: string) =>
      fetch(`${baseUrl}/playbook/execution/batch`, {
        method: "POST",
        headers: { authorization: `Bearer ${stack.token()}`, "content-type": "application/json", prefer: "respond-async" },
        body: JSON.stringify({
          inputList: Array.from({ length: count }, (_, i) => ({ ...input, attributes: { ...input.attributes, service: `${name}-${i}` } })),
        }),
      });
    // Held at the data source, so that the batch's items stay queued or running while the second one comes.
    prometheus.hold();
    const accepted = await startBatch(first ?? "", BATCH_ITEMS, "batch");
    expect(accepted.status).toBe(202);
    const location = accepted.headers.get("location") ?? "";
    const batchId = location.split("/").pop() ?? "";
    // The batch's record, and the organization's lanes holding its items' places, under the organization's hash tag.
    const batchKeys = await keysOnMasters(`${stack.prefix}:org:*:batch:*`);
    expect(batchKeys).toEqual(expect.arrayContaining([`${stack.prefix}:org:{acme}:batch:${batchId}`]));
    expect(await keysOnMasters(`${stack.prefix}:org:*:lane:batch`)).toEqual([`${stack.prefix}:org:{acme}:lane:batch`]);

    // Through the other API: 50 queued + 20 more is past the organization's 60.
    const refused = await startBatch(second ?? "", 20, "refused");
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    prometheus.release();

    let batch: {
      status?: string;
      progress?: { total: number; done: number; failed: number };
      items?: { index: number; status: string; result?: { highlights?: string } }[];
    } = {};
    while (batch.status !== "completed") {
      const response = await fetch(`${second}${location}?limit=1000`, { headers: { authorization: `Bearer ${stack.token()}` } });
      expect(response.status).toBe(200);
      batch = (await response.json()) as typeof batch;
      if (batch.status !== "completed") await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(batch.progress).toEqual({ total: BATCH_ITEMS, done: BATCH_ITEMS, failed: 0 });
    expect(batch.items?.map((item) => item.index)).toEqual(Array.from({ length: BATCH_ITEMS }, (_, i) => i));
    for (const item of batch.items ?? []) expect(item.result?.highlights).toEqual(expect.any(String));
  });

  it("a master failing over under executions in flight loses none: every caller gets its result or an explicit error", { timeout: 120_000 }, async () => {
    const queueKey = `{${stack.prefix}}:playbook-executions:wait`;
    const owner = await cluster.masterOf(queueKey);
    prometheus.hold();
    const before = prometheus.requests.length;
    const inFlight = 12;
    // Each its own execution with queries of its own (a worker shares identical queries in flight),
    // spread over both APIs, held at the data source by the workers.
    const distinct = (i: number) => execute(stack.baseUrls[i % 2] ?? "", {}, { ...input, attributes: { ...input.attributes, service: `checkout-${i}` } });
    const early = Array.from({ length: inFlight }, (_, i) => distinct(i));
    // Accepted and running: every one's queries (three each, run at once) are held at the data source.
    await prometheus.waitForRequests(before + inFlight * ACTIONS);

    const failover = cluster.killMaster(queueKey);
    // More callers while the queue's master is down or being replaced: each is accepted or refused.
    const during = Array.from({ length: 6 }, (_, i) => distinct(inFlight + i));
    const { killed, promoted } = await failover;
    expect(killed).toEqual(owner);
    expect(await cluster.masterOf(queueKey)).toEqual(promoted);
    prometheus.release();
    // And callers after it.
    const after = Array.from({ length: 6 }, (_, i) => distinct(inFlight + 6 + i));

    const answers = await Promise.all([...early, ...during, ...after]);
    const outcomes = answers.map((answer) => {
      const body = JSON.parse(answer.body) as { highlights?: string; error?: string };
      if (answer.status === 200 && body.error === undefined && typeof body.highlights === "string") return "result";
      // An explicit refusal (503: Redis unreachable, nothing enqueued) or an execution's explicit error.
      if ((answer.status === 503 || answer.status === 200) && typeof body.error === "string") return `error: ${body.error}`;
      return `unexpected ${answer.status}: ${answer.body.slice(0, 200)}`;
    });
    expect(outcomes.filter((outcome) => outcome !== "result" && !outcome.startsWith("error: "))).toEqual([]);
    // The executions accepted before the failover were running on workers: each of them ends in its result.
    expect(outcomes.slice(0, inFlight)).toEqual(Array.from({ length: inFlight }, () => "result"));
    // And the service takes executions again once the replica took over.
    expect(outcomes.slice(-after.length)).toEqual(after.map(() => "result"));
  });
});
