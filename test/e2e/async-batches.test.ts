import { describe, expect, it } from "vitest";
import { startRedis } from "@pes/local-services";
import { waitForOk } from "../support/processes.js";
import { eachTestOnTheExample, FAST_STALLS, startStack, type Stack } from "../support/stack.js";

// checkout-latency has three Prometheus actions: one execution = three queries at the data source.
const ACTIONS = 3;
const testTimeout = { timeout: 120_000 };

const world = eachTestOnTheExample();

/** `count` distinct issues: each item is an execution of its own. */
function inputList(count: number) {
  return Array.from({ length: count }, (_, i) => ({
    bookName: "checkout-latency",
    attributes: { service: `service-${i}`, env: "production" },
    time: "2026-11-21T13:43:00Z",
  }));
}

interface BatchItem {
  index: number;
  status: string;
  result?: { error?: string; highlights?: string };
}

interface Batch {
  status: string;
  progress: { total: number; done: number; failed: number };
  items: BatchItem[];
}

async function startBatch(target: Stack, count: number): Promise<string> {
  const response = await fetch(`${target.baseUrl}/playbook/execution/batch`, {
    method: "POST",
    headers: { authorization: `Bearer ${target.token()}`, "content-type": "application/json", prefer: "respond-async" },
    body: JSON.stringify({ inputList: inputList(count) }),
  });
  expect(response.status).toBe(202);
  return response.headers.get("location") ?? "";
}

/** Reads the batch (every item) until it completed; a 503 (Redis away) is read again. */
async function untilCompleted(target: Stack, location: string): Promise<Batch> {
  for (;;) {
    const response = await fetch(`${target.baseUrl}${location}?limit=1000`, { headers: { authorization: `Bearer ${target.token()}` } });
    if (response.status === 200) {
      const batch = (await response.json()) as Batch;
      if (batch.status === "completed") return batch;
    } else {
      expect(response.status).toBe(503);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Every item ended in a result or an explicit error, in order. */
function expectEveryItemAnswered(batch: Batch, total: number): void {
  expect(batch.progress.total).toBe(total);
  expect(batch.progress.done).toBe(total);
  expect(batch.items.map((item) => item.index)).toEqual(Array.from({ length: total }, (_, i) => i));
  for (const item of batch.items) {
    expect(["completed", "failed"]).toContain(item.status);
    expect(item.result?.highlights ?? item.result?.error).toEqual(expect.any(String));
  }
}

describe("async batches across processes", () => {
  it("a worker SIGKILLed mid-batch: its items run again elsewhere, and every item ends in a result", testTimeout, async () => {
    const total = 100;
    const concurrency = 10;
    world.stack = await startStack({
      name: "batch-kill",
      configDir: world.config.dir,
      workers: 1,
      workerEnv: { ...FAST_STALLS, WORKER_CONCURRENCY: String(concurrency), WORKER_BATCH_CONCURRENCY: String(concurrency) },
    });
    world.prometheus.hold();
    const location = await startBatch(world.stack, total);
    // The first worker holds `concurrency` items mid-run.
    await world.prometheus.waitForRequests(concurrency * ACTIONS);

    const [doomed] = world.stack.workers;
    await world.stack.addWorker();
    await doomed?.stop("SIGKILL");
    world.prometheus.release();

    const batch = await untilCompleted(world.stack, location);
    expectEveryItemAnswered(batch, total);
    // A worker dying once does not use up an item: each ran again on the other worker.
    expect(batch.progress.failed).toBe(0);
    expect(world.prometheus.requests.length).toBeGreaterThanOrEqual((total + concurrency) * ACTIONS);
  });

  it("Redis SIGKILLed and restarted from its AOF mid-batch: every item ends in a result or an explicit error", testTimeout, async () => {
    world.redis = await startRedis({ spawn: true, appendOnly: true });
    const total = 50;
    const concurrency = 5;
    world.stack = await startStack({
      name: "batch-redis-crash",
      configDir: world.config.dir,
      redis: world.redis,
      workers: 1,
      workerEnv: { WORKER_CONCURRENCY: String(concurrency) },
    });
    world.prometheus.hold();
    const target = world.stack;
    const location = await startBatch(target, total);
    await world.prometheus.waitForRequests(concurrency * ACTIONS);

    await world.redis.restart({
      crash: true,
      // The running items finish while Redis is away; their replies wait for it.
      whileDown: async () => world.prometheus.release(),
    });

    await waitForOk(`${world.stack.baseUrl}/readyz`, 10_000);
    expectEveryItemAnswered(await untilCompleted(world.stack, location), total);
    expect(world.stack.api.child.exitCode).toBeNull();
    expect(world.stack.workers[0]?.child.exitCode).toBeNull();
  });
});
