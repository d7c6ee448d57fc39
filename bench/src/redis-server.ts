import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "@pes/local-services";
import { Redis } from "ioredis";
import { spawnChild, type ChildHandle } from "./child-processes.js";
import { waitUntil } from "./wait-until.js";

export interface BenchRedis {
  url: string;
  /** The redis-server the harness spawned; undefined when REDIS_URL was given. */
  child: ChildHandle | undefined;
}

/**
 * REDIS_URL when set, else a fresh redis-server on a free loopback port: a separate process, like in
 * production, with persistence off (`--save ""`, `--appendonly no`) so that disk I/O of this shared
 * machine does not enter the figures, and `noeviction` as BullMQ requires.
 */
export async function startBenchRedis(workDir: string, logDir: string): Promise<BenchRedis> {
  const fromEnv = process.env.REDIS_URL;
  if (fromEnv !== undefined && fromEnv !== "") return { url: fromEnv, child: undefined };
  const port = await freePort();
  const dataDir = join(workDir, "redis");
  mkdirSync(dataDir, { recursive: true });
  const logPath = join(logDir, "redis.log");
  const child = spawnChild({
    name: "redis-server",
    command: "redis-server",
    args: ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--maxmemory-policy", "noeviction", "--dir", dataDir],
    env: process.env,
    logPath,
  });
  const url = `redis://127.0.0.1:${port}`;
  await waitUntil("redis-server", () => ping(url), { timeoutMs: 10_000, child, logPath });
  return { url, child };
}

async function ping(url: string): Promise<boolean> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on("error", () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === "PONG";
  } finally {
    client.disconnect();
  }
}
