import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { spawnChild, type ChildHandle } from "./child-processes.js";
import { waitUntil } from "./wait-until.js";

export interface BarePath {
  baseUrl: string;
  /** Starts one more bare worker process on the same queue. */
  addWorker(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The bare path: the service's architecture with none of its work — an HTTP server that enqueues the
 * request as a BullMQ job, a worker process that makes the one data-source query and publishes a reply,
 * the server answering with it (bare-path-api.ts, bare-path-worker.ts). Measured in scenario 1 beside
 * the raw floor, it is the floor of any implementation of the architecture: the same processes and hops
 * as the full path, without Express, authentication, validation, resolution, analysis or summaries.
 */
export async function startBarePath(options: {
  redisUrl: string;
  prefix: string;
  port: number;
  stubUrl: string;
  workerConcurrency: number;
  logDir: string;
}): Promise<BarePath> {
  const env = {
    ...process.env,
    REDIS_URL: options.redisUrl,
    BARE_PREFIX: options.prefix,
    BARE_PORT: String(options.port),
    BARE_STUB_URL: options.stubUrl,
    BARE_CONCURRENCY: String(options.workerConcurrency),
  };
  const children: ChildHandle[] = [];
  const close = async (): Promise<void> => {
    for (const child of children.reverse()) await child.stop().catch(() => undefined);
  };
  const start = async (name: string, script: string, ready: RegExp): Promise<void> => {
    const logPath = join(options.logDir, `${name}.log`);
    const child = spawnChild({
      name,
      command: process.execPath,
      args: [fileURLToPath(new URL(script, import.meta.url))],
      env,
      logPath,
    });
    children.push(child);
    await waitUntil(name, async () => ready.test(readFileSync(logPath, "utf8")), { timeoutMs: 15_000, child, logPath });
  };
  let workers = 0;
  const addWorker = async (): Promise<void> => {
    workers += 1;
    await start(`bare-path-worker-${workers}`, "./bare-path-worker.js", /bare path worker ready/);
  };
  try {
    await addWorker();
    await start("bare-path-api", "./bare-path-api.js", /bare path api ready/);
  } catch (error) {
    await close();
    throw error;
  }
  return { baseUrl: `http://127.0.0.1:${options.port}`, addWorker, close };
}
