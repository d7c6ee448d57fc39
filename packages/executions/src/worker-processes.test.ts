// Black-box: real worker processes (test-fixtures/worker-process.mjs on the built package) against a
// real Redis, killed and stopped the way an orchestrator does. Needs `npm run build` first (turbo's
// test task depends on build).
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { JsonText } from "@pes/contracts";
import { startRedis, uniquePrefix, type RedisHandle } from "@pes/local-services";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createExecutionClient, type ExecutionClient, type ExecutionOutcome, type ExecutionRequest } from "./index.js";

const FIXTURE = fileURLToPath(new URL("../test-fixtures/worker-process.mjs", import.meta.url));
const logger = pino({ level: "silent" });

let redis: RedisHandle;
let prefix: string;
let signalDir: string;
let client: ExecutionClient;
const children: ChildProcess[] = [];

beforeAll(async () => {
  if (!existsSync(fileURLToPath(new URL("../dist/index.js", import.meta.url)))) {
    throw new Error("packages/executions is not built: run `npx turbo run build --filter=@pes/executions` first");
  }
  redis = await startRedis();
});

afterAll(async () => {
  await redis.stop();
});

beforeEach(async () => {
  prefix = uniquePrefix("worker-processes");
  signalDir = await mkdtemp(join(tmpdir(), "pes-worker-test-"));
  client = createExecutionClient({ redisUrl: redis.url, prefix, logger });
  await client.start();
});

afterEach(async () => {
  await Promise.all(children.splice(0).map((child) => stop(child, "SIGKILL")));
  await client.close();
  await rm(signalDir, { recursive: true, force: true });
});

const request: ExecutionRequest = {
  orgId: "acme",
  requestId: "req-process",
  bookName: "latency",
  time: "2026-01-01T10:00:00Z",
  attributes: {},
  liveRun: false,
};

interface WorkerProcess {
  child: ChildProcess;
  pid: number;
  /** Resolves with the first log line whose `msg` is `message`. */
  logged(message: string): Promise<void>;
  exited: Promise<number | null>;
}

async function spawnWorker(env: { lockMs: number; stalledMs: number; shutdownMs: number }): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [FIXTURE], {
    env: {
      ...process.env,
      REDIS_URL: redis.url,
      QUEUE_PREFIX: prefix,
      SIGNAL_DIR: signalDir,
      WORKER_LOCK_DURATION_MS: String(env.lockMs),
      WORKER_STALLED_INTERVAL_MS: String(env.stalledMs),
      SHUTDOWN_TIMEOUT_MS: String(env.shutdownMs),
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  const messages: string[] = [];
  const listeners = new Set<() => void>();
  let buffered = "";
  child.stdout?.setEncoding("utf8");
  child.stdout?.on("data", (chunk: string) => {
    buffered += chunk;
    const lines = buffered.split("\n");
    buffered = lines.pop() ?? "";
    for (const line of lines) {
      try {
        const entry = JSON.parse(line) as { msg?: string };
        if (entry.msg !== undefined) messages.push(entry.msg);
      } catch {
        messages.push(line);
      }
    }
    for (const listener of listeners) listener();
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const logged = (message: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (messages.includes(message)) {
          listeners.delete(check);
          resolve();
        }
      };
      listeners.add(check);
      check();
      void exited.then(() => {
        if (listeners.delete(check)) reject(new Error(`worker ${child.pid} exited before logging "${message}"`));
      });
    });
  const worker = { child, pid: child.pid ?? -1, logged, exited };
  await worker.logged("test worker ready");
  return worker;
}

function stop(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill(signal);
  });
}

/** Resolves with the pid of the worker that started the job (bounded wait on its marker file). */
async function startedBy(pids: number[], timeoutMs = 20_000): Promise<number> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const files = await readdir(signalDir);
    const pid = pids.find((candidate) => files.includes(`started-${candidate}`));
    if (pid !== undefined) return pid;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no worker among ${pids.join(", ")} started the job within ${timeoutMs} ms`);
}

const release = () => writeFile(join(signalDir, "release"), "");

describe("worker processes", () => {
  it("when SIGTERM's deadline passes, hands the job to another worker at once (no lock expiry) and exits 0", async () => {
    // A 30 s lock: if the hand-back relied on lock expiry, the caller's 20 s deadline would pass first.
    const slowLocks = { lockMs: 30_000, stalledMs: 30_000, shutdownMs: 1_000 };
    const first = await spawnWorker(slowLocks);
    const pending = client.execute(request, 20_000);
    await startedBy([first.pid]);
    const second = await spawnWorker(slowLocks);

    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);
    expect(await startedBy([second.pid])).toBe(second.pid);
    await release();

    expect(JSON.parse(textOf((await pending).outcome)) as unknown).toEqual({ highlights: `done by ${second.pid}` });
  }, 60_000);
});

function textOf(outcome: ExecutionOutcome): string {
  if (!(outcome instanceof JsonText)) throw new Error(`expected a result, got a refusal: ${outcome.describe()}`);
  return outcome.text;
}
