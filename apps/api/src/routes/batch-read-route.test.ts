// Reading async batches back under load: event streams share one reader per batch and stop reading when
// their clients leave; pages are read a few at a time and sent at the pace their clients read them. A real
// Redis, the real execution client (its batch reads counted) and a job worker in this process; clients
// over real HTTP.
import { EventEmitter, once } from "node:events";
import { createServer, get as httpGet, type ClientRequest, type IncomingMessage, type ServerResponse } from "node:http";
import { performance } from "node:perf_hooks";
import { startRedis, uniquePrefix, type RedisHandle } from "@pes/local-services";
import { createLogger } from "@pes/logger";
import { createBatchStarts, createExecutionWorker, createExecutionClient, EXECUTE_JOB, START_BATCH_JOB, type ExecutionClient } from "@pes/executions";
import { handleJob, type JobWorker } from "@pes/jobs";
import request from "supertest";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { rsaKey, signToken, startJwksServer, testApp, type JwksServer, type TestAppOptions } from "../testing/fixtures.js";

const key = rsaKey("key-1");
const acme = signToken({ key });
const logger = createLogger({ name: "api-test", level: "silent" });
const item = (host: string) => ({ bookName: "disk-full", attributes: { host }, time: "2024-05-01T11:59:00Z" });

let jwks: JwksServer;
let redis: RedisHandle;

beforeAll(async () => {
  [jwks, redis] = await Promise.all([startJwksServer([key.jwk]), startRedis()]);
});

afterAll(async () => {
  await Promise.all([jwks.close(), redis.stop()]);
});

/** An execution client on its own prefix, and a worker for it that answers `result(host)` once started. */
function queue(result: (host: string) => string = (host) => `disk-full on ${host}`) {
  const prefix = uniquePrefix("api-batch-reads");
  const client = createExecutionClient({ redisUrl: redis.url, prefix, logger, coalescing: { bucketMs: 60_000, reuseMs: 60_000 } });
  let worker: JobWorker | undefined;
  return {
    client,
    async startWorker() {
      const starts = createBatchStarts({ redisUrl: redis.url, prefix, logger });
      worker = createExecutionWorker({
        redisUrl: redis.url,
        prefix,
        logger,
        concurrency: 20,
        batchStarts: starts,
        handlers: [
          handleJob(START_BATCH_JOB, (job, { signal }) => starts.run(job, signal)),
          handleJob(EXECUTE_JOB, async (job) => ({ highlights: result(String(job.attributes.host)) })),
        ],
      });
      await worker.start();
    },
    async close() {
      await client.close();
      await worker?.close(5_000);
    },
  };
}

/**
 * The client with its batch reads recorded: which batch, which page, when it began. While held, reads
 * wait to be released before they go to Redis.
 */
function countingReads(inner: ExecutionClient) {
  const log: { batchId: string; limit: number; at: number }[] = [];
  const events = new EventEmitter();
  let held: { promise: Promise<void>; release: () => void } | undefined;
  const client: ExecutionClient = {
    ...inner,
    batches: {
      ...inner.batches,
      async read(orgId, batchId, page) {
        log.push({ batchId, limit: page.limit, at: performance.now() });
        events.emit("read");
        if (held !== undefined) await held.promise;
        return inner.batches.read(orgId, batchId, page);
      },
    },
  };
  return {
    client,
    of: (batchId: string) => log.filter((read) => read.batchId === batchId),
    /** Forgets the reads so far (those of creating the batches). */
    reset() {
      log.length = 0;
    },
    async until(batchId: string, count: number) {
      while (log.filter((read) => read.batchId === batchId).length < count) await once(events, "read");
    },
    hold(): () => void {
      let release = () => {};
      const promise = new Promise<void>((resolve) => {
        release = resolve;
      });
      held = { promise, release };
      return () => {
        held = undefined;
        release();
      };
    },
  };
}

function api(executionClient: ExecutionClient, options: Partial<TestAppOptions> = {}) {
  const { app } = testApp({ jwksUrl: jwks.url, ...options, executionClient, limits: { bodyLimit: "1mb", ...options.limits } });
  return {
    app,
    async: () => request(app).post("/playbook/execution/batch").set("Authorization", `Bearer ${acme}`).set("Prefer", "respond-async"),
    get: (path: string) => request(app).get(path).set("Authorization", `Bearer ${acme}`),
  };
}

/** The app on a real port; `responses` are the server's side of each request, in order of arrival. */
async function serve(app: ReturnType<typeof api>["app"]) {
  const responses: ServerResponse[] = [];
  const server = createServer((req, res) => {
    responses.push(res);
    app(req, res);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return {
    responses,
    /** Starts a GET; the response is neither read nor waited for. */
    get(path: string, headers: Record<string, string> = {}): ClientRequest {
      return httpGet({ host: "127.0.0.1", port: address.port, path, headers: { Authorization: `Bearer ${acme}`, ...headers } });
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

interface ServerSentEvent {
  event: string;
  data: { status: string; progress: { total: number; done: number; failed: number }; items: unknown[] };
}

/** An event stream as a client reads it: its events and comments so far, and its end. */
function openStream(served: Awaited<ReturnType<typeof serve>>, path: string) {
  const state = { events: [] as ServerSentEvent[], comments: [] as string[], status: 0 };
  const changed = new EventEmitter();
  let text = "";
  const ended = new Promise<void>((resolve, reject) => {
    served
      .get(path, { Accept: "text/event-stream" })
      .on("error", reject)
      .on("response", (response: IncomingMessage) => {
        state.status = response.statusCode ?? 0;
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          text += chunk;
          const blocks = text.split("\n\n");
          text = blocks.pop() ?? "";
          for (const block of blocks) {
            if (block.startsWith(":")) state.comments.push(block);
            else {
              const [event, data] = block.split("\n");
              state.events.push({ event: event?.replace("event: ", "") ?? "", data: JSON.parse(data?.replace("data: ", "") ?? "null") });
            }
          }
          changed.emit("changed");
        });
        response.on("end", resolve);
      });
  });
  return {
    ...state,
    get events() {
      return state.events;
    },
    get comments() {
      return state.comments;
    },
    ended,
    async until(condition: () => boolean) {
      while (!condition()) await once(changed, "changed");
    },
  };
}

const idOf = (location: string) => location.split("/").at(-1) ?? "";

describe("event streams", () => {
  let q: ReturnType<typeof queue>;
  beforeEach(() => {
    q = queue();
    return q.client.start();
  });
  afterEach(() => q.close());

  it("read a batch once per interval however many of them watch it, and each hears every change and the end", async () => {
    const intervalMs = 100;
    const reads = countingReads(q.client);
    const { app, async } = api(reads.client, { batchStream: { intervalMs } });
    const location = (await async().send({ inputList: [item("db-1"), item("db-2"), item("db-3")] })).headers.location ?? "";
    reads.reset();
    const served = await serve(app);
    try {
      const streams = Array.from({ length: 5 }, () => openStream(served, location));
      await Promise.all(streams.map((stream) => stream.until(() => stream.events.length > 0)));
      // Intervals with nothing new: the batch is read, nobody is told.
      await reads.until(idOf(location), 4);
      // One that comes later hears the progress as it stands, at once.
      const late = openStream(served, location);
      await late.until(() => late.events.length > 0);
      streams.push(late);
      await q.startWorker();
      await Promise.all(streams.map((stream) => stream.ended));

      for (const stream of streams) {
        expect(stream.events[0]).toEqual({ event: "progress", data: expect.objectContaining({ progress: { total: 3, done: 0, failed: 0 }, items: [] }) });
        expect(stream.events.at(-1)).toEqual({
          event: "completed",
          data: expect.objectContaining({ status: "completed", progress: { total: 3, done: 3, failed: 0 } }),
        });
        expect(stream.events.slice(0, -1).every((event) => event.event === "progress")).toBe(true);
      }
      // One reader: each read of the batch begins an interval after the one before, whatever the streams.
      const starts = reads.of(idOf(location)).map((read) => read.at);
      const gaps = starts.slice(1).map((at, k) => at - (starts[k] ?? 0));
      expect(Math.min(...gaps)).toBeGreaterThanOrEqual(intervalMs - 5);
    } finally {
      await served.close();
    }
  });

  it("stop reading a batch for a client that left before its first event", async () => {
    const intervalMs = 50;
    const reads = countingReads(q.client);
    const { app, async } = api(reads.client, { batchStream: { intervalMs } });
    const [left, other] = await Promise.all([async().send({ inputList: [item("db-1")] }), async().send({ inputList: [item("db-2")] })]);
    const leftId = idOf(left.headers.location ?? "");
    reads.reset();
    const served = await serve(app);
    try {
      const release = reads.hold();
      const leaving = served.get(left.headers.location ?? "", { Accept: "text/event-stream" }).on("error", () => {});
      await reads.until(leftId, 1);
      leaving.destroy();
      const [response] = served.responses;
      if (response === undefined) throw new Error("the server saw no request");
      if (!response.destroyed) await once(response, "close");
      release();
      // A clock: another batch's stream, read at once and then once per interval. Its third read begins
      // two intervals after the first read of the batch that was left came back: any further read of
      // that one would have begun by then.
      openStream(served, other.headers.location ?? "");
      await reads.until(idOf(other.headers.location ?? ""), 3);
      expect(reads.of(leftId)).toHaveLength(1);
    } finally {
      await served.close();
    }
  });

  it("send a keep-alive comment when the progress stays the same", async () => {
    const { app, async } = api(q.client, { batchStream: { intervalMs: 20, keepAliveMs: 50 } });
    const location = (await async().send({ inputList: [item("db-1")] })).headers.location ?? "";
    const served = await serve(app);
    try {
      const stream = openStream(served, location);
      await stream.until(() => stream.comments.length >= 2);
      expect(stream.comments.slice(0, 2)).toEqual([": keep-alive", ": keep-alive"]);
      expect(stream.events.map((event) => [event.event, event.data.progress])).toEqual([["progress", { total: 1, done: 0, failed: 0 }]]);
    } finally {
      await served.close();
    }
  });

  it("answer 404 without opening a stream for a batch of no such id", async () => {
    const { get } = api(q.client);
    const missing = await get("/playbook/execution/batch/00000000-0000-4000-8000-000000000000").set("Accept", "text/event-stream");
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: "No such batch" });
  });
});

describe("pages", () => {
  /** Large results: a page of 1,000 is far more than the socket buffers between a server and a client that does not read. */
  const RESULT_CHARS = 16_000;
  const result = (host: string) => `${host} ${"x".repeat(RESULT_CHARS)}`;
  const PAGE_CHARS = 1_000 * RESULT_CHARS;
  let q: ReturnType<typeof queue>;
  let location: string;

  beforeAll(async () => {
    q = queue(result);
    await q.client.start();
    const { async, get } = api(q.client);
    location = (await async().send({ inputList: Array.from({ length: 1_000 }, (_, index) => item(`db-${index}`)) })).headers.location ?? "";
    await q.startWorker();
    while ((await get(`${location}?limit=0`)).body.status !== "completed") await new Promise((resolve) => setTimeout(resolve, 50));
  }, 60_000);
  afterAll(() => q.close());

  /** A GET of the whole page whose response is not read until `read()` is called. */
  function unread(served: Awaited<ReturnType<typeof serve>>) {
    const requested = served.get(`${location}?limit=1000`);
    const response = new Promise<IncomingMessage>((resolve, reject) => requested.on("response", resolve).on("error", reject));
    return {
      requested,
      async read(): Promise<{ status: number; body: string }> {
        const answer = await response;
        answer.setEncoding("utf8");
        let body = "";
        for await (const chunk of answer) body += chunk;
        return { status: answer.statusCode ?? 0, body };
      },
    };
  }

  /** The server's side of the first request, once it waits for its client to take what it wrote. */
  async function waitingForDrain(served: Awaited<ReturnType<typeof serve>>): Promise<ServerResponse> {
    await vi.waitFor(() => expect(served.responses[0]?.writableNeedDrain).toBe(true), { timeout: 4_000, interval: 10 });
    const [response] = served.responses;
    if (response === undefined) throw new Error("the server saw no request");
    return response;
  }

  it("send a page of 1,000 items as the JSON of every item in order, to a client that reads late", async () => {
    const served = await serve(api(q.client).app);
    try {
      const page = unread(served);
      const response = await waitingForDrain(served);
      // The server waits for the client rather than holding the rest of the page: about a slice waits in
      // it, and what it handed the socket is what the socket buffers took.
      expect(response.socket?.writableLength).toBeLessThan(256 * 1024);
      expect(response.socket?.bytesWritten).toBeLessThan(PAGE_CHARS / 2);

      const { status, body } = await page.read();
      expect(status).toBe(200);
      const parsed = JSON.parse(body);
      expect(parsed).toMatchObject({ id: idOf(location), status: "completed", offset: 0, progress: { total: 1_000, done: 1_000, failed: 0 } });
      expect(parsed.items).toEqual(
        Array.from({ length: 1_000 }, (_, index) => ({
          index,
          executionId: expect.any(String),
          status: "completed",
          result: { highlights: result(`db-${index}`) },
        })),
      );
    } finally {
      await served.close();
    }
  });

  it("read one page at a time with the bound at 1: another read meanwhile gets 429 with Retry-After, and the next after the client left gets its page", async () => {
    const { app, get } = api(q.client, { limits: { batchPageReads: { inFlight: 1, waiting: 0 } } });
    const served = await serve(app);
    try {
      const page = unread(served);
      const response = await waitingForDrain(served);
      const refused = await get(`${location}?limit=1`);
      expect(refused.status).toBe(429);
      expect(refused.headers["retry-after"]).toBe("1");
      expect(refused.body).toEqual({ error: "Too many batch pages being read; retry shortly" });

      page.requested.destroy();
      if (!response.destroyed) await once(response, "close");
      const next = await get(`${location}?limit=1`);
      expect(next.status).toBe(200);
      expect(next.body.items).toEqual([{ index: 0, executionId: expect.any(String), status: "completed", result: { highlights: result("db-0") } }]);
    } finally {
      await served.close();
    }
  });

  it("disconnect a client that takes nothing for the stall timeout, which frees its place", async () => {
    const { app, get } = api(q.client, { limits: { batchPageReads: { inFlight: 1, waiting: 0 }, batchPageStallTimeoutMs: 200 } });
    const served = await serve(app);
    try {
      const page = unread(served);
      const response = await waitingForDrain(served);
      if (!response.destroyed) await once(response, "close");
      // What reached the client before it was cut off is not the whole page.
      expect(
        await page.read().then(
          ({ body }) => `complete: ${body.length} characters`,
          (error: Error) => error.message,
        ),
      ).toBe("aborted");
      expect((await get(`${location}?limit=1`)).status).toBe(200);
    } finally {
      await served.close();
    }
  });
});
