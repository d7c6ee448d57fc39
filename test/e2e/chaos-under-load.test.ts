// Chaos under load, black-box: real API and worker processes, a real Redis, a Prometheus that holds its
// answers so that executions are mid-flight when something dies. Every accepted request must end in a
// 200 with a result or an explicit error: none hangs, none is lost.
import { describe, expect, it } from "vitest";
import type { PlaybookExecutionResult } from "@pes/contracts";
import { startRedis } from "@pes/local-services";
import { waitForOk, waitForStatus } from "../support/processes.js";
import { eachTestOnTheExample, FAST_STALLS, postJson, startStack, type Stack } from "../support/stack.js";

// checkout-latency has three Prometheus actions: one execution = three queries.
const ACTIONS = 3;

const world = eachTestOnTheExample();

/**
 * One execution; the `n`th asks about its own service, so that no two share a query (a worker fetches an
 * identical query of concurrent executions once, which would hide the dead worker's re-runs from the count).
 */
function execute(target: Stack, n = 0): Promise<{ status: number; body: unknown }> {
  const input = { bookName: "checkout-latency", attributes: { service: `checkout-${n}`, env: "production" } };
  return postJson(`${target.baseUrl}/playbook/execution`, target.token(), input);
}

/** Every answer is a 200 carrying a full result or an explicit error; returns the errors. */
function errorsOf(answers: { status: number; body: unknown }[]): string[] {
  for (const { status } of answers) expect(status).toBe(200);
  const results = answers.map(({ body }) => body as PlaybookExecutionResult);
  for (const result of results) {
    if (result.error === undefined) expect(result.actionResults).toHaveLength(ACTIONS);
    else expect(result.error).toMatch(/\S/);
  }
  return results.flatMap((result) => (result.error === undefined ? [] : [result.error]));
}

// Callers' deadline, longer than each test's own timeout: an answer must come through the reply path, not
// from the look-up at the deadline.
const deadlineMs = "60000";
const testTimeout = { timeout: 30_000 };

/** Identical requests run as executions of their own (coalescing has tests of its own in coalescing.test.ts). */
const separate = { COALESCE_BUCKET_SECONDS: "0" };

describe("chaos under load", () => {
  it("a worker SIGKILLed with 40 executions in flight: its jobs run again elsewhere and every caller gets a result", testTimeout, async () => {
    const requests = 40;
    // Each worker takes half of the executions, and runs all of their queries at once.
    const workerEnv = { ...FAST_STALLS, WORKER_CONCURRENCY: String(requests / 2), MAX_CONCURRENT_ACTIONS: String(requests * ACTIONS) };
    // 40 executions of their own: no coalescing (the services differ too).
    world.stack = await startStack({
      name: "kill-under-load",
      configDir: world.config.dir,
      workers: 2,
      workerEnv,
      apiEnv: { EXECUTION_TIMEOUT_MS: deadlineMs, ...separate },
    });
    world.prometheus.hold();
    const target = world.stack;
    const pending = Array.from({ length: requests }, (_, n) => execute(target, n));
    await world.prometheus.waitForRequests(requests * ACTIONS);

    const [doomed] = world.stack.workers;
    await doomed?.stop("SIGKILL");
    await world.stack.addWorker();
    world.prometheus.release();

    expect(errorsOf(await Promise.all(pending))).toEqual([]);
    // The dead worker's half ran a second time.
    expect(world.prometheus.requests.length).toBeGreaterThanOrEqual((requests + requests / 2) * ACTIONS);
  });

  it(
    "Redis SIGKILLed and restarted from its AOF: 503 while it is down, then every accepted execution is answered and new ones succeed",
    testTimeout,
    async () => {
      world.redis = await startRedis({ spawn: true, appendOnly: true });
      const requests = 10;
      // Half run when Redis dies, half wait in the queue (kept by the AOF).
      const running = requests / 2;
      world.stack = await startStack({
        name: "redis-crash",
        configDir: world.config.dir,
        redis: world.redis,
        workers: 1,
        workerEnv: { WORKER_CONCURRENCY: String(running) },
        apiEnv: { EXECUTION_TIMEOUT_MS: deadlineMs, ...separate },
      });
      world.prometheus.hold();
      const target = world.stack;
      const accepted = Array.from({ length: requests }, () => execute(target));
      await world.prometheus.waitForRequests(running * ACTIONS);

      await world.redis.restart({
        crash: true,
        whileDown: async () => {
          await waitForStatus(`${target.baseUrl}/readyz`, 503, 10_000);
          expect((await execute(target)).status).toBe(503);
          // The running executions finish while Redis is away; their replies wait for it.
          world.prometheus.release();
        },
      });

      // The same API and worker processes, reconnected on their own.
      await waitForOk(`${world.stack.baseUrl}/readyz`, 10_000);
      expect(errorsOf([await execute(world.stack)])).toEqual([]);
      expect(errorsOf(await Promise.all(accepted))).toEqual([]);
      expect(world.stack.api.child.exitCode).toBeNull();
      expect(world.stack.workers[0]?.child.exitCode).toBeNull();
    },
  );
});
