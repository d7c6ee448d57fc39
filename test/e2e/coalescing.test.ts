import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { TestHttpServer } from "@pes/local-services";
import { startHoldingPrometheus } from "../support/holding-prometheus.js";
import { exampleConfig, startStack, type Stack } from "../support/stack.js";

// checkout-latency has three Prometheus actions: one execution = three queries at the data source.
const ACTIONS = 3;
const input = { bookName: "checkout-latency", attributes: { service: "checkout", env: "production" }, time: "2026-11-21T13:43:00Z" };

let prometheus: TestHttpServer;
let config: Awaited<ReturnType<typeof exampleConfig>>;
let stack: Stack | undefined;

beforeEach(async () => {
  prometheus = await startHoldingPrometheus();
  config = await exampleConfig({ metrics: prometheus.url });
});

afterEach(async () => {
  await stack?.stop();
  stack = undefined;
  await prometheus.close();
  await config.remove();
});

interface Answer {
  status: number;
  executionId: string | null;
  body: string;
}

/** POSTs the execution, keeping the status, the X-Execution-Id and the body as sent. */
async function execute(baseUrl: string, token: string): Promise<Answer> {
  const response = await fetch(`${baseUrl}/playbook/execution`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(input),
  });
  return { status: response.status, executionId: response.headers.get("x-execution-id"), body: await response.text() };
}

/** pes_executions_coalesced_total summed over the given APIs' /metrics. */
async function coalesced(baseUrls: readonly string[]): Promise<number> {
  const counts = await Promise.all(
    baseUrls.map(async (url) => {
      const text = await (await fetch(`${url}/metrics`)).text();
      return Number(/^pes_executions_coalesced_total (\d+)/m.exec(text)?.[1] ?? Number.NaN);
    }),
  );
  return counts.reduce((sum, count) => sum + count, 0);
}

/** Waits until `count` requests joined (counted by the APIs), so that none arrives after the release. */
async function untilCoalesced(baseUrls: readonly string[], count: number): Promise<void> {
  while ((await coalesced(baseUrls)) < count) await new Promise((resolve) => setTimeout(resolve, 50));
}

// Short locks so that a killed worker's job is detected as stalled within seconds, not the default 30 s.
const fastStalls = { WORKER_LOCK_DURATION_MS: "1500", WORKER_STALLED_INTERVAL_MS: "1000" };

describe("coalescing across API and worker processes", () => {
  it("a storm of 200 identical concurrent requests through two APIs and two workers: one execution, 200 identical answers", { timeout: 90_000 }, async () => {
    stack = await startStack({ name: "storm", configDir: config.dir, apis: 2, workers: 2 });
    const { baseUrls } = stack;
    const token = stack.token();
    prometheus.hold();

    const answers = Promise.all(Array.from({ length: 200 }, (_, i) => execute(baseUrls[i % 2] ?? "", token)));
    await prometheus.waitForRequests(ACTIONS);
    await untilCoalesced(baseUrls, 199);
    prometheus.release();

    const all = await answers;
    expect(all.map((answer) => answer.status)).toEqual(all.map(() => 200));
    expect(new Set(all.map((answer) => answer.executionId)).size).toBe(1);
    expect(new Set(all.map((answer) => answer.body)).size).toBe(1);
    expect(JSON.parse(all[0]?.body ?? "{}")).toMatchObject({ highlights: expect.any(String) });
    expect(JSON.parse(all[0]?.body ?? "{}").error).toBeUndefined();
    // Counted at the data source: one execution's queries, not 200.
    expect(prometheus.requests.length).toBe(ACTIONS);
    expect(await coalesced(baseUrls)).toBe(199);
  });

  it("a worker killed while callers are joined: every caller gets the re-run's result, none hangs", { timeout: 90_000 }, async () => {
    stack = await startStack({ name: "joined-crash", configDir: config.dir, apis: 2, workers: 1, workerEnv: fastStalls });
    const { baseUrls } = stack;
    const token = stack.token();
    prometheus.hold();

    const answers = Promise.all(Array.from({ length: 20 }, (_, i) => execute(baseUrls[i % 2] ?? "", token)));
    await prometheus.waitForRequests(ACTIONS);
    await untilCoalesced(baseUrls, 19);
    const [first] = stack.workers;
    await stack.addWorker();
    await first?.stop("SIGKILL");
    // Its lock expires, and the second worker runs the execution again.
    await prometheus.waitForRequests(2 * ACTIONS);
    prometheus.release();

    const all = await answers;
    expect(all.map((answer) => answer.status)).toEqual(all.map(() => 200));
    expect(new Set(all.map((answer) => answer.executionId)).size).toBe(1);
    expect(new Set(all.map((answer) => answer.body)).size).toBe(1);
    expect(JSON.parse(all[0]?.body ?? "{}").error).toBeUndefined();
    expect(prometheus.requests.length).toBe(2 * ACTIONS);
  });
});
