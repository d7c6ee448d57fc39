/**
 * The bare path's worker: a BullMQ Worker whose job makes the one data-source query (undici, keep-alive,
 * as the connectors do), parses its JSON and publishes a reply. No engine, no analysis, no validation.
 * Env: REDIS_URL, BARE_PREFIX, BARE_STUB_URL, BARE_CONCURRENCY.
 */
import { Worker } from "bullmq";
import { Redis } from "ioredis";
import { Agent, request } from "undici";

const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const stubUrl = `${process.env.BARE_STUB_URL ?? "http://127.0.0.1:9090"}/api/v1/query_range`;
const query = new URLSearchParams({ query: "up", start: "1700000000", end: "1700004500", step: "15" }).toString();
const agent = new Agent({ keepAliveTimeout: 30_000 });
const replies = new Redis(redisUrl, { maxRetriesPerRequest: null });

const worker = new Worker(
  "bare-path",
  async (job) => {
    const response = await request(stubUrl, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: query,
      dispatcher: agent,
    });
    const answer = (await response.body.json()) as { data: { result: unknown[] } };
    const { replyTo } = job.data as { replyTo: string };
    await replies.publish(replyTo, JSON.stringify({ jobId: job.id, result: { series: answer.data.result.length } }));
  },
  {
    connection: { url: redisUrl, maxRetriesPerRequest: null },
    prefix: process.env.BARE_PREFIX ?? "bench-bare",
    concurrency: Number(process.env.BARE_CONCURRENCY ?? "64"),
    autorun: false,
  },
);
worker.on("error", () => undefined);
void worker.run();
await worker.waitUntilReady();
console.log("bare path worker ready");
process.on("SIGTERM", () => {
  void Promise.allSettled([worker.close(), replies.quit()]).then(() => process.exit(0));
});
