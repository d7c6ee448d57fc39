// A rolling deploy, black-box: the API and worker processes of this version beside the other side of the
// queue one version apart: a worker of the previous version (its reply format: `<jobId>\n<result JSON>`)
// and an API of the next version (a job with a higher `v` and a field this version does not know).
import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { decodeReply, JsonText, WIRE_VERSION, type PlaybookExecutionResult } from "@pes/contracts";
import type { TestHttpServer } from "@pes/local-services";
import { startHoldingPrometheus } from "../support/holding-prometheus.js";
import { exampleConfig, postJson, startStack, type Stack } from "../support/stack.js";

// The queue both versions use; renaming it would strand jobs, so it is the same across versions.
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
  it("the API answers with the result of a worker of the previous version, read from its reply format", async () => {
    const connection = connect();
    const received: Record<string, unknown>[] = [];
    // That worker's reply path: the job id, a newline, the result JSON; stored, then published.
    const previousWorker = new Worker<Record<string, unknown>>(
      EXECUTION_QUEUE,
      async (job) => {
        received.push(job.data);
        const reply = `${job.id}\n${JSON.stringify({ highlights: "answered by the previous version" })}`;
        await connection.set(`${stack.prefix}:result:${job.id}`, reply, "PX", 60_000);
        await connection.publish(`${stack.prefix}:reply:${String(job.data.replyTo)}`, reply);
      },
      { connection, prefix: stack.prefix },
    );
    closers.push(() => previousWorker.close());

    const { status, body } = await postJson(`${stack.baseUrl}/playbook/execution`, stack.token(), input);

    expect(status).toBe(200);
    expect(body).toEqual({ highlights: "answered by the previous version" });
    expect(received[0]).toMatchObject({ v: WIRE_VERSION, bookName: "checkout-latency" });
  });

  it("a worker runs jobs of an API of the next version and of before versioning, answering each in its format", async () => {
    await stack.addWorker();
    const connection = connect();
    const queue = new Queue(EXECUTION_QUEUE, { connection, prefix: stack.prefix });
    closers.push(() => queue.close());
    const subscriber = connect();
    const replies = new Map<string, string>();
    const arrived = new Set<() => void>();
    subscriber.on("message", (channel: string, message: string) => {
      replies.set(channel, message);
      for (const check of arrived) check();
    });
    const replyOn = (instance: string) =>
      new Promise<string>((resolve) => {
        const check = () => {
          const message = replies.get(`${stack.prefix}:reply:${instance}`);
          if (message === undefined) return;
          arrived.delete(check);
          resolve(message);
        };
        arrived.add(check);
        check();
      });
    await subscriber.subscribe(`${stack.prefix}:reply:api-next`, `${stack.prefix}:reply:api-previous`, `${stack.prefix}:reply:api-v1`);
    const job = {
      orgId: "acme",
      requestId: "req-rolling",
      bookName: "checkout-latency",
      time: new Date().toISOString(),
      attributes: input.attributes,
      liveRun: false,
      deadline: Date.now() + 60_000,
    };

    // The next version's API: a higher version and a field this worker does not know.
    await queue.add("execute", { ...job, v: WIRE_VERSION + 1, replyTo: "api-next", lane: "interactive" }, { jobId: "from-next" });
    // An API of before versioning: no `v`.
    await queue.add("execute", { ...job, replyTo: "api-previous" }, { jobId: "from-previous" });
    // The API of the version before this one (1): no refusals in its replies.
    await queue.add("execute", { ...job, v: 1, replyTo: "api-v1" }, { jobId: "from-v1" });

    const next = decodeReply(await replyOn("api-next"));
    expect(next).toMatchObject({ jobId: "from-next", version: WIRE_VERSION });
    const result = JSON.parse(next?.result instanceof JsonText ? next.result.text : "{}") as PlaybookExecutionResult;
    expect(result.error).toBeUndefined();
    expect(result.actionResults).toHaveLength(3);
    // What that API's decoder reads: the job id, a newline, the result JSON.
    expect(await replyOn("api-previous")).toMatch(/^from-previous\n\{"highlights":/);
    expect(await replyOn("api-v1")).toMatch(/^\{"v":1,"jobId":"from-v1"\}\n\{"highlights":/);
  });
});
