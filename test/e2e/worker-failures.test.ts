import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { PlaybookExecutionResult } from "@pes/contracts";
import type { TestHttpServer } from "@pes/local-services";
import { startHoldingPrometheus } from "../support/holding-prometheus.js";
import { exampleConfig, postJson, startStack, type Stack } from "../support/stack.js";

// checkout-latency has three Prometheus actions: one execution = three queries.
const ACTIONS = 3;
const input = { bookName: "checkout-latency", attributes: { service: "checkout", env: "production" } };

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

// Short locks so that a killed worker's job is detected as stalled within seconds, not the default 30 s.
const fastStalls = { WORKER_LOCK_DURATION_MS: "1500", WORKER_STALLED_INTERVAL_MS: "1000" };

describe("worker failures", () => {
  it("a job whose worker dies twice is failed, and its caller is told then, not at the deadline", { timeout: 40_000 }, async () => {
    // A deadline longer than this test's own timeout: only a reply sent when the job fails lets it pass.
    stack = await startStack({ name: "stalled-twice", configDir: config.dir, workers: 1, workerEnv: fastStalls, apiEnv: { EXECUTION_TIMEOUT_MS: "60000" } });
    prometheus.hold();
    const pending = postJson(`${stack.baseUrl}/playbook/execution`, stack.token(), input);
    await prometheus.waitForRequests(ACTIONS);

    const [first] = stack.workers;
    const second = await stack.addWorker();
    await first?.stop("SIGKILL");
    // The first stall: the second worker runs the job again, and dies in turn.
    await prometheus.waitForRequests(2 * ACTIONS);
    await stack.addWorker();
    await second.stop("SIGKILL");

    const { status, body } = await pending;
    expect(status).toBe(200);
    expect((body as PlaybookExecutionResult).error).toMatch(/^Execution failed: .*stalled/);
    // The second stall failed it: it never ran a third time.
    expect(prometheus.requests.length).toBe(2 * ACTIONS);
  });

  it("the only worker killed: the caller gets an explicit error at the deadline, never a hang", async () => {
    stack = await startStack({ name: "sigkill-alone", configDir: config.dir, workers: 1, workerEnv: fastStalls, apiEnv: { EXECUTION_TIMEOUT_MS: "4000" } });
    prometheus.hold();
    const pending = postJson(`${stack.baseUrl}/playbook/execution`, stack.token(), input);
    await prometheus.waitForRequests(ACTIONS);
    await stack.workers[0]?.stop("SIGKILL");

    const { status, body } = await pending;
    expect(status).toBe(200);
    expect((body as PlaybookExecutionResult).error).toMatch(/timed out/i);
  });

  it("SIGTERM lets the active execution finish before the worker exits", async () => {
    stack = await startStack({ name: "sigterm", configDir: config.dir, workers: 1 });
    prometheus.hold();
    const pending = postJson(`${stack.baseUrl}/playbook/execution`, stack.token(), input);
    await prometheus.waitForRequests(ACTIONS);

    const worker = stack.workers[0];
    const exited = worker?.stop("SIGTERM");
    await worker?.waitForLine(/shutting down|closing/i);
    prometheus.release();

    const { status, body } = await pending;
    expect(status).toBe(200);
    expect((body as PlaybookExecutionResult).error).toBeUndefined();
    expect(await exited).toEqual({ code: 0, signal: null });
  });

  it("no worker at all: the caller gets an explicit timed-out error and the job is not run later", async () => {
    stack = await startStack({ name: "no-worker", configDir: config.dir, workers: 0, apiEnv: { EXECUTION_TIMEOUT_MS: "1500" } });
    const { status, body } = await postJson(`${stack.baseUrl}/playbook/execution`, stack.token(), input);
    expect(status).toBe(200);
    expect((body as PlaybookExecutionResult).error).toMatch(/timed out/i);

    // A worker that starts afterwards finds nothing to run: the timed-out job was withdrawn.
    await stack.addWorker();
    const next = await postJson(`${stack.baseUrl}/playbook/execution`, stack.token(), input);
    expect((next.body as PlaybookExecutionResult).error).toBeUndefined();
    expect(prometheus.requests.length).toBe(ACTIONS);
  });
});
