import { describe, expect, it } from "vitest";
import type { PlaybookExecutionResult } from "@pes/contracts";
import { eachTestOnTheExample, FAST_STALLS, postJson, startStack } from "../support/stack.js";

// checkout-latency has three Prometheus actions: one execution = three queries.
const ACTIONS = 3;
const input = { bookName: "checkout-latency", attributes: { service: "checkout", env: "production" } };

const world = eachTestOnTheExample();

describe("worker failures", () => {
  it("a job whose worker dies twice is failed, and its caller is told then, not at the deadline", { timeout: 40_000 }, async () => {
    // A deadline longer than this test's own timeout: only a reply sent when the job fails lets it pass.
    world.stack = await startStack({
      name: "stalled-twice",
      configDir: world.config.dir,
      workers: 1,
      workerEnv: FAST_STALLS,
      apiEnv: { EXECUTION_TIMEOUT_MS: "60000" },
    });
    world.prometheus.hold();
    const pending = postJson(`${world.stack.baseUrl}/playbook/execution`, world.stack.token(), input);
    await world.prometheus.waitForRequests(ACTIONS);

    const [first] = world.stack.workers;
    const second = await world.stack.addWorker();
    await first?.stop("SIGKILL");
    // The first stall: the second worker runs the job again, and dies in turn.
    await world.prometheus.waitForRequests(2 * ACTIONS);
    await world.stack.addWorker();
    await second.stop("SIGKILL");

    const { status, body } = await pending;
    expect(status).toBe(200);
    expect((body as PlaybookExecutionResult).error).toMatch(/^Execution failed: .*stalled/);
    // The second stall failed it: it never ran a third time.
    expect(world.prometheus.requests.length).toBe(2 * ACTIONS);
  });

  it("the only worker killed: the caller gets an explicit error at the deadline, never a hang", async () => {
    world.stack = await startStack({
      name: "sigkill-alone",
      configDir: world.config.dir,
      workers: 1,
      workerEnv: FAST_STALLS,
      apiEnv: { EXECUTION_TIMEOUT_MS: "4000" },
    });
    world.prometheus.hold();
    const pending = postJson(`${world.stack.baseUrl}/playbook/execution`, world.stack.token(), input);
    await world.prometheus.waitForRequests(ACTIONS);
    await world.stack.workers[0]?.stop("SIGKILL");

    const { status, body } = await pending;
    expect(status).toBe(200);
    expect((body as PlaybookExecutionResult).error).toMatch(/timed out/i);
  });

  it("SIGTERM lets the active execution finish before the worker exits", async () => {
    world.stack = await startStack({ name: "sigterm", configDir: world.config.dir, workers: 1 });
    world.prometheus.hold();
    const pending = postJson(`${world.stack.baseUrl}/playbook/execution`, world.stack.token(), input);
    await world.prometheus.waitForRequests(ACTIONS);

    const worker = world.stack.workers[0];
    const exited = worker?.stop("SIGTERM");
    await worker?.waitForLine(/shutting down|closing/i);
    world.prometheus.release();

    const { status, body } = await pending;
    expect(status).toBe(200);
    expect((body as PlaybookExecutionResult).error).toBeUndefined();
    expect(await exited).toEqual({ code: 0, signal: null });
  });

  it("no worker at all: the caller gets an explicit timed-out error and the job is not run later", async () => {
    world.stack = await startStack({ name: "no-worker", configDir: world.config.dir, workers: 0, apiEnv: { EXECUTION_TIMEOUT_MS: "1500" } });
    const { status, body } = await postJson(`${world.stack.baseUrl}/playbook/execution`, world.stack.token(), input);
    expect(status).toBe(200);
    expect((body as PlaybookExecutionResult).error).toMatch(/timed out/i);

    // A worker that starts afterwards finds nothing to run: the timed-out job was withdrawn.
    await world.stack.addWorker();
    const next = await postJson(`${world.stack.baseUrl}/playbook/execution`, world.stack.token(), input);
    expect((next.body as PlaybookExecutionResult).error).toBeUndefined();
    expect(world.prometheus.requests.length).toBe(ACTIONS);
  });
});
