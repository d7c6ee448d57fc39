/**
 * The raw floor's worker: a bare BullMQ Worker in its own process whose job does nothing. What the
 * producer then measures is BullMQ + Redis + process hop alone, the floor under any execution.
 * Env: REDIS_URL, RAW_PREFIX, RAW_QUEUE, RAW_CONCURRENCY.
 */
import { Worker } from "bullmq";

const worker = new Worker(process.env.RAW_QUEUE ?? "raw-floor", async () => "ok", {
  connection: { url: process.env.REDIS_URL ?? "redis://127.0.0.1:6379", maxRetriesPerRequest: null },
  prefix: process.env.RAW_PREFIX ?? "bench-raw",
  concurrency: Number(process.env.RAW_CONCURRENCY ?? "64"),
  autorun: false,
});
worker.on("error", (error) => process.stderr.write(`raw floor worker error: ${error.message}\n`));
await worker.waitUntilReady();
void worker.run();
process.stdout.write("raw floor worker ready\n");

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.once(signal, () => {
    void worker.close().then(() => process.exit(0));
  });
}
