import { describe, expect, it } from "vitest";
import { eachTestOnTheExample, FAST_STALLS, startStack } from "../support/stack.js";

// checkout-latency has three Prometheus actions: one execution = three queries at the data source.
const ACTIONS = 3;
const input = { bookName: "checkout-latency", attributes: { service: "checkout", env: "production" }, time: "2026-11-21T13:43:00Z" };

const world = eachTestOnTheExample();

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

describe("coalescing across API and worker processes", () => {
  it("a storm of 200 identical concurrent requests through two APIs and two workers: one execution, 200 identical answers", { timeout: 90_000 }, async () => {
    world.stack = await startStack({ name: "storm", configDir: world.config.dir, apis: 2, workers: 2 });
    const { baseUrls } = world.stack;
    const token = world.stack.token();
    world.prometheus.hold();

    const answers = Promise.all(Array.from({ length: 200 }, (_, i) => execute(baseUrls[i % 2] ?? "", token)));
    await world.prometheus.waitForRequests(ACTIONS);
    await untilCoalesced(baseUrls, 199);
    world.prometheus.release();

    const all = await answers;
    expect(all.map((answer) => answer.status)).toEqual(all.map(() => 200));
    expect(new Set(all.map((answer) => answer.executionId)).size).toBe(1);
    expect(new Set(all.map((answer) => answer.body)).size).toBe(1);
    expect(JSON.parse(all[0]?.body ?? "{}")).toMatchObject({ highlights: expect.any(String) });
    expect(JSON.parse(all[0]?.body ?? "{}").error).toBeUndefined();
    // Counted at the data source: one execution's queries, not 200.
    expect(world.prometheus.requests.length).toBe(ACTIONS);
    expect(await coalesced(baseUrls)).toBe(199);
  });

  it("a worker killed while callers are joined: every caller gets the re-run's result, none hangs", { timeout: 90_000 }, async () => {
    world.stack = await startStack({ name: "joined-crash", configDir: world.config.dir, apis: 2, workers: 1, workerEnv: FAST_STALLS });
    const { baseUrls } = world.stack;
    const token = world.stack.token();
    world.prometheus.hold();

    const answers = Promise.all(Array.from({ length: 20 }, (_, i) => execute(baseUrls[i % 2] ?? "", token)));
    await world.prometheus.waitForRequests(ACTIONS);
    await untilCoalesced(baseUrls, 19);
    const [first] = world.stack.workers;
    await world.stack.addWorker();
    await first?.stop("SIGKILL");
    // Its lock expires, and the second worker runs the execution again.
    await world.prometheus.waitForRequests(2 * ACTIONS);
    world.prometheus.release();

    const all = await answers;
    expect(all.map((answer) => answer.status)).toEqual(all.map(() => 200));
    expect(new Set(all.map((answer) => answer.executionId)).size).toBe(1);
    expect(new Set(all.map((answer) => answer.body)).size).toBe(1);
    expect(JSON.parse(all[0]?.body ?? "{}").error).toBeUndefined();
    expect(world.prometheus.requests.length).toBe(2 * ACTIONS);
  });
});
