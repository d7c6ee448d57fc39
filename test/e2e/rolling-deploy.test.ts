// A rolling deploy, black-box: the API and worker processes of this version beside the other side of the
// queue one version ahead: a worker of the next version (a reply header with fields this API does not
// know) and an API of the next version (a job with a higher `v` and a field this worker does not know).
import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { WIRE_VERSION, type PlaybookExecutionResult } from "@pes/contracts";
import { defineLifecycleCommands, finishExecution } from "@pes/executions";
import { keySpace } from "@pes/jobs";
import type { TestHttpServer } from "@pes/local-services";
import { startHoldingPrometheus } from "../support/holding-prometheus.js";
import { exampleConfig, postJson, startStack, type Stack } from "../support/stack.js";

// What both versions share: the queue's name, and the script that finishes an execution (a next
// version's worker finishes executions the same way, or the two could not run side by side).
const EXECUTION_QUEUE = "playbook-executions";
const input = { bookName: "checkout-latency", attributes: { service: "checkout", env: "production" } };

let prometheus: TestHttpServer;
let config: Awaited<ReturnType<typeof exampleConfig>>;
let stack: Stack;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  prometheus = await startHoldingPrometheus();
  config = await exampleConfig({ metrics: prometheus.url });
  stack = await startStack({ name: "rolling-deploy", configDir: config.dir, workers: 0 });
});

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

afterAll(async () => {
  await stack?.stop();
  await prometheus?.close();
  await config?.remove();
});

function connect(): Redis {
  const connection = new Redis(stack.redisUrl, { maxRetriesPerRequest: null });
  closers.push(() => connection.quit());
  return connection;
}

describe("rolling deploy: API and workers one version apart", () => {
  it("the API answers with the result of a worker of the next version, reading its reply header tolerantly", async () => {
    const connection = connect();
    const replies = connect();
    defineLifecycleCommands(replies);
    const keys = keySpace(stack.prefix, stack.redisUrl);
    const received: Record<string, unknown>[] = [];
    const nextWorker = new Worker<Record<string, unknown>>(
      EXECUTION_QUEUE,
      async (job) => {
        received.push(job.data);
        const header = JSON.stringify({ v: WIRE_VERSION + 1, jobId: job.id, workerId: "w-next" });
        const reply = `${header}\n${JSON.stringify({ highlights: "answered by the next version" })}`;
        await finishExecution(replies, keys, String(job.data.orgId), job.id ?? "", { reply, status: "completed", reusable: true });
      },
      { connection, prefix: stack.prefix },
    );
    closers.push(() => nextWorker.close());

    const { status, body } = await postJson(`${stack.baseUrl}/playbook/execution`, stack.token(), input);

    expect(status).toBe(200);
    expect(body).toEqual({ highlights: "answered by the next version" });
    expect(received[0]).toMatchObject({ v: WIRE_VERSION, bookName: "checkout-latency" });
  });

  it("a worker runs a job of an API of the next version: the unknown field dropped, the result in the record", async () => {
    const accepted = await fetch(`${stack.baseUrl}/playbook/execution`, {
      method: "POST",
      headers: { authorization: `Bearer ${stack.token()}`, "content-type": "application/json", prefer: "respond-async", "cache-control": "no-cache" },
      body: JSON.stringify(input),
    });
    expect(accepted.status).toBe(202);
    const executionId = accepted.headers.get("x-execution-id") ?? "";
    // As the next version's API would have sent it: a higher version and a field this worker does not know.
    const queue = new Queue(EXECUTION_QUEUE, { connection: connect(), prefix: stack.prefix });
    closers.push(() => queue.close());
    const job = await queue.getJob(executionId);
    await job?.updateData({ ...(job.data as Record<string, unknown>), v: WIRE_VERSION + 1, lane: "interactive" });
    await stack.addWorker();

    let view: { status?: string; result?: PlaybookExecutionResult } = {};
    while (view.status !== "completed" && view.status !== "failed") {
      const response = await fetch(`${stack.baseUrl}/playbook/execution/${executionId}`, { headers: { authorization: `Bearer ${stack.token()}` } });
      view = (await response.json()) as typeof view;
      if (view.status !== "completed") await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(view.status).toBe("completed");
    expect(view.result?.error).toBeUndefined();
    expect(view.result?.actionResults).toHaveLength(3);
  });
});
