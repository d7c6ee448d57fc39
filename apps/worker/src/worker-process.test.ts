// Black-box: the built worker (dist/main.js) started as an operator would, against a real Redis and a
// fake Prometheus (a real HTTP server on 127.0.0.1 speaking the query API) that holds every query until
// the test lets it answer, so that a worker can be killed or stopped mid-execution.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:http";
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { writeConfigDir } from "@pes/config/testing";
import { JsonText, type PlaybookExecutionResult } from "@pes/contracts";
import { sendJson, startRedis, startTestHttpServer, uniquePrefix, type RedisHandle, type TestHttpServer } from "@pes/local-services";
import { createExecutionClient, type ExecutionClient, type ExecutionAnswer, type ExecutionRequest } from "@pes/executions";
import { createLogger } from "@pes/logger";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";

const MAIN = fileURLToPath(new URL("../dist/main.js", import.meta.url));

let redis: RedisHandle;
let prefix: string;
let configDir: string;
let client: ExecutionClient;
let prometheus: TestHttpServer;
const children: ChildProcess[] = [];

beforeAll(async () => {
  if (!existsSync(MAIN)) throw new Error("apps/worker is not built: run `npx tsc -p apps/worker/tsconfig.build.json` first");
  redis = await startRedis();
});

afterAll(async () => {
  await redis.stop();
});

beforeEach(async () => {
  prefix = uniquePrefix("worker-app");
  prometheus = await startFakePrometheus();
  configDir = await writeConfig(prometheus.url);
  client = createExecutionClient({ redisUrl: redis.url, prefix, logger: createLogger({ name: "test-client", level: "silent" }) });
  await client.start();
});

afterEach(async () => {
  await Promise.all(children.splice(0).map((child) => kill(child, "SIGKILL")));
  await client.close();
  await prometheus.close();
  await rm(configDir, { recursive: true, force: true });
});

function request(): ExecutionRequest {
  return {
    orgId: "acme",
    requestId: "req-worker-app",
    bookName: "slow-metrics",
    time: new Date().toISOString(),
    attributes: { service: "checkout" },
    liveRun: false,
  };
}

describe("worker process (dist/main.js)", () => {
  it("stops the queries of a job whose caller's deadline passed, then takes the next job", async () => {
    // One job at a time, and actions that may run an hour: only the job's deadline can stop the first one.
    const worker = await startWorker({ WORKER_CONCURRENCY: "1", ACTION_TIMEOUT_MS: "3600000" });
    const first = client.execute(request(), 1_500);
    await prometheus.waitForRequests(1);

    // Prometheus holds the query; at the caller's deadline the worker gives it up (closes the request).
    await prometheus.waitForAbandoned(1);
    expect(resultOf(await first).error).toMatch(/timed out/);
    const next = client.execute(request(), 30_000);
    await prometheus.waitForRequests(2);
    prometheus.release();

    const result = resultOf(await next);
    expect(result.error).toBeUndefined();
    expect(result.actionResults).toHaveLength(1);
    await worker.logged("stopped at its caller's deadline");
  }, 30_000);

  it("serves /healthz, /readyz and /metrics on its own listener, with the jobs and actions it ran", async () => {
    const worker = await startWorker({});
    const base = httpBase(worker);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect(await (await fetch(`${base}/readyz`)).json()).toEqual({ status: "ok" });

    prometheus.release();
    const result = resultOf(await client.execute(request(), 30_000));
    expect(result.error).toBeUndefined();

    const scrape = await fetch(`${base}/metrics`);
    expect(scrape.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    const text = await scrape.text();
    expect(text).toContain('pes_jobs_total{job_name="execute",outcome="result"} 1');
    expect(text).toContain('pes_jobs_total{job_name="execute",outcome="timeout"} 0');
    expect(text).toContain('pes_actions_total{org="acme",connector="prometheus",data_source="metrics",outcome="ok"} 1');
    expect(text).toContain('pes_action_duration_seconds_count{org="acme",connector="prometheus",data_source="metrics"} 1');
    expect(text).toMatch(/^process_resident_memory_bytes \d+/m);
    expect((await fetch(`${base}/nowhere`)).status).toBe(404);
  });

  it("answers /readyz 503 from the moment shutdown begins, while /healthz still answers", async () => {
    const worker = await startWorker({ SHUTDOWN_TIMEOUT_MS: "20000" });
    const base = httpBase(worker);
    const pending = client.execute(request(), 30_000);
    // The job's query is held: the worker keeps running it after SIGTERM.
    await prometheus.waitForRequests(prometheus.requests.length + 1);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);

    worker.child.kill("SIGTERM");
    await worker.logged("shutting down: finishing active jobs");

    const readiness = await fetch(`${base}/readyz`);
    expect(readiness.status).toBe(503);
    expect(await readiness.json()).toEqual({ error: expect.stringContaining("Not ready") });
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    prometheus.release();
    expect(resultOf(await pending)).toMatchObject({ actionResults: [expect.any(Object)] });
    expect(await worker.exited).toBe(0);
  });

  it("wants METRICS_TOKEN as a bearer token for /metrics, not for the probes", async () => {
    const token = "worker-scrape-token-5e8d1c";
    const base = httpBase(await startWorker({ METRICS_TOKEN: token }));
    expect((await fetch(`${base}/metrics`)).status).toBe(401);
    expect((await fetch(`${base}/metrics`, { headers: { authorization: "Bearer wrong-token-0000000" } })).status).toBe(401);
    expect((await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
  });

  it("refuses to start when its HTTP port is taken, in one line saying to set WORKER_HTTP_PORT", async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    try {
      const address = taken.address();
      if (address === null || typeof address === "string") throw new Error("no port");
      const worker = launch({ WORKER_HTTP_PORT: String(address.port) });
      expect(await worker.exited).toBe(1);
      expect(worker.stderr()).toBe(
        `WORKER_HTTP_PORT=${address.port} is in use on 127.0.0.1 (another worker on this host?): give each worker on a host its own WORKER_HTTP_PORT, or 0 for a free one\n`,
      );
    } finally {
      taken.close();
    }
  });

  it("refuses to start on a bad environment variable, naming it", async () => {
    const worker = launch({ WORKER_CONCURRENCY: "many" });
    expect(await worker.exited).toBe(1);
    expect(worker.stderr()).toMatch(/WORKER_CONCURRENCY/);
  });

  it("refuses to start on invalid configuration, naming the file", async () => {
    await writeFile(join(configDir, "playbooks", "acme", "broken.yaml"), "name: broken\ngadgets: 3\n");
    const worker = launch({});
    expect(await worker.exited).toBe(1);
    expect(worker.stderr()).toMatch(/playbooks\/acme\/broken\.yaml/);
  });

  describe("when Redis refuses the connection", () => {
    const password = "right-pw-4b1e9c";
    let guarded: RedisHandle;
    beforeAll(async () => {
      guarded = await startRedis({ password });
    });
    afterAll(async () => {
      await guarded.stop();
    });

    it.each([
      ["a wrong password", { password: "wrong-pw-7d2a5f" }, /WRONGPASS/],
      ["no password", { password: "" }, /NOAUTH/],
      ["a database number it does not have", { password, database: "99" }, /DB index is out of range/],
    ])("exits 1 naming the refusal (%s), without printing the password", async (_case, given, refusal) => {
      const url = new URL(guarded.url);
      url.password = given.password;
      if ("database" in given) url.pathname = `/${given.database}`;

      const worker = launch({ REDIS_URL: url.toString() });

      expect(await worker.exited).toBe(1);
      expect(worker.stderr()).toMatch(/refused the connection/);
      expect(worker.stderr()).toMatch(refusal);
      for (const secret of [password, given.password].filter((text) => text !== "")) {
        expect(worker.output()).not.toContain(secret);
      }
    });
  });

  it("refuses to start when a referenced secret is not set, naming the variable", async () => {
    await writeFile(
      join(configDir, "organizations", "acme.yaml"),
      [
        "id: acme",
        "clientIds: [test-client]",
        "dataSources:",
        "  metrics:",
        "    type: prometheus",
        `    url: ${prometheus.url}`,
        "    auth:",
        "      bearerToken: { env: PES_TEST_UNSET_TOKEN }",
        "",
      ].join("\n"),
    );
    const worker = launch({ PES_TEST_UNSET_TOKEN: "" });
    expect(await worker.exited).toBe(1);
    expect(worker.stderr()).toMatch(/PES_TEST_UNSET_TOKEN/);
  });
});

interface WorkerProcess {
  child: ChildProcess;
  exited: Promise<number | null>;
  logged(message: string): Promise<void>;
  stderr(): string;
  /** Everything it wrote, stdout and stderr. */
  output(): string;
}

function launch(env: Record<string, string>): WorkerProcess {
  const child = spawn(process.execPath, [MAIN], {
    env: {
      ...process.env,
      REDIS_URL: redis.url,
      QUEUE_PREFIX: prefix,
      CONFIG_DIR: configDir,
      WORKER_CONCURRENCY: "2",
      ACTION_TIMEOUT_MS: "30000",
      LOG_LEVEL: "info",
      // A free port each: several workers run at once here.
      WORKER_HTTP_PORT: "0",
      WORKER_HTTP_HOST: "127.0.0.1",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  const messages: string[] = [];
  const listeners = new Set<() => void>();
  let stdout = "";
  let stderr = "";
  let output = "";
  child.stdout?.setEncoding("utf8");
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (chunk: string) => {
    stderr += chunk;
    output += chunk;
  });
  child.stdout?.on("data", (chunk: string) => {
    stdout += chunk;
    output += chunk;
    const lines = stdout.split("\n");
    stdout = lines.pop() ?? "";
    for (const line of lines) {
      try {
        const entry = JSON.parse(line) as { msg?: unknown };
        if (typeof entry.msg === "string") messages.push(entry.msg);
      } catch {
        // Not a log line.
      }
    }
    for (const listener of listeners) listener();
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const logged = (message: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (!messages.includes(message)) return;
        listeners.delete(check);
        resolve();
      };
      listeners.add(check);
      check();
      void exited.then((code) => {
        if (listeners.delete(check)) reject(new Error(`worker exited (${code}) before logging "${message}":\n${stderr}`));
      });
    });
  return { child, exited, logged, stderr: () => stderr, output: () => output };
}

/** The address of a started worker's own HTTP listener, from its log line. */
function httpBase(worker: WorkerProcess): string {
  const port = /"port":(\d+),"msg":"worker http listening/.exec(worker.output())?.[1];
  if (port === undefined) throw new Error(`the worker logged no HTTP port:\n${worker.output()}`);
  return `http://127.0.0.1:${port}`;
}

async function startWorker(env: Record<string, string>): Promise<WorkerProcess> {
  const worker = launch(env);
  await worker.logged("worker ready");
  return worker;
}

function kill(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill(signal);
  });
}

async function writeConfig(prometheusUrl: string): Promise<string> {
  return writeConfigDir({
    organizations: [["id: acme", "clientIds: [test-client]", "dataSources:", "  metrics:", "    type: prometheus", `    url: ${prometheusUrl}`, ""].join("\n")],
    playbooks: {
      acme: [
        [
          "name: slow-metrics",
          "monitorNames:",
          '  - "Slow metrics of {{service}}"',
          "gadgets:",
          '  - title: "Latency of {{service}}"',
          "    actions:",
          "      - title: p99 latency",
          "        dataSource: metrics",
          "        prometheus:",
          "          query: 'max(latency_seconds{service={{service}}})'",
          "          unit: s",
          "",
        ].join("\n"),
      ],
    },
  });
}

/**
 * Prometheus' HTTP query API (`/api/v1/query`, `/api/v1/query_range`), holding each answer until the
 * test releases them.
 */
function startFakePrometheus(): Promise<TestHttpServer> {
  return startTestHttpServer(
    (request, response) => {
      if (!request.url.startsWith("/api/v1/query")) {
        response.writeHead(404).end();
        return;
      }
      const now = Math.floor(Date.now() / 1000);
      const data = request.url.startsWith("/api/v1/query_range")
        ? {
            resultType: "matrix",
            result: [
              {
                metric: {},
                values: [
                  [now - 60, "0.2"],
                  [now, "0.9"],
                ],
              },
            ],
          }
        : { resultType: "vector", result: [{ metric: {}, value: [now, "0.9"] }] };
      sendJson(response, 200, { status: "success", data });
    },
    { hold: true },
  );
}

/** The result an execution answered (a refusal fails the test). */
function resultOf({ outcome }: ExecutionAnswer): PlaybookExecutionResult {
  if (!(outcome instanceof JsonText)) throw new Error(`expected a result, got a refusal: ${outcome.describe()}`);
  return JSON.parse(outcome.text) as PlaybookExecutionResult;
}
