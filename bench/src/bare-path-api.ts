/**
 * The bare path's API: what any implementation of this architecture must do for one execution, and
 * nothing else. node:http (no framework, no token, no validation) → Queue.add → a reply on a pub/sub
 * channel → the response. Env: REDIS_URL, BARE_PREFIX, BARE_PORT.
 */
import { randomUUID } from "node:crypto";
import { createServer, type ServerResponse } from "node:http";
import { Queue } from "bullmq";
import { Redis } from "ioredis";

const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const prefix = process.env.BARE_PREFIX ?? "bench-bare";
const channel = `${prefix}:replies`;
const waiting = new Map<string, ServerResponse>();

const producer = new Redis(redisUrl, { maxRetriesPerRequest: null });
const subscriber = new Redis(redisUrl, { maxRetriesPerRequest: null });
const queue = new Queue("bare-path", { connection: producer, prefix });
subscriber.on("message", (_channel: string, message: string) => {
  const { jobId, result } = JSON.parse(message) as { jobId: string; result: unknown };
  const response = waiting.get(jobId);
  if (response === undefined) return;
  waiting.delete(jobId);
  const json = JSON.stringify(result);
  response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(json) });
  response.end(json);
});

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on("data", (chunk: Buffer) => chunks.push(chunk));
  request.on("end", () => {
    const input = JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown;
    const jobId = randomUUID();
    waiting.set(jobId, response);
    queue.add("bare", { input, replyTo: channel }, { jobId, removeOnComplete: true }).catch(() => {
      waiting.delete(jobId);
      response.writeHead(503).end();
    });
  });
});
server.keepAliveTimeout = 60_000;

await subscriber.subscribe(channel);
await queue.waitUntilReady();
server.listen(Number(process.env.BARE_PORT ?? "0"), "127.0.0.1", () => console.log("bare path api ready"));
process.on("SIGTERM", () => {
  server.close();
  void Promise.allSettled([queue.close(), subscriber.quit()]).then(() => process.exit(0));
});
