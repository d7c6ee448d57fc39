/**
 * The image's production install, reproduced without a container engine: the repository (its apps
 * built) is copied to a temp dir, `scripts/production-install.mjs` (the Dockerfile's step) installs the
 * run-time dependencies there, and the API and a worker are started from that copy against a real Redis.
 * What must hold: node_modules under 100 MB, no development package in it, and both processes working
 * on it: ready, an execution answered, Redoc's page and the queue dashboard served, traces exported.
 */
import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { cp, mkdtemp, readdir, rm } from "node:fs/promises";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { promisify } from "node:util";
import { loadOrCreateDevKey, mintDevToken } from "@pes/dev-issuer";
import { freePort, startRedis, uniquePrefix, type RedisHandle } from "@pes/local-services";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOtlpReceiver, type OtlpReceiver } from "../support/otlp-receiver.js";
import { repoRoot, startService, waitForOk, type ServiceProcess } from "../support/processes.js";
import { exampleConfig } from "../support/stack.js";

const LIMIT_BYTES = 100_000_000;
/** Not in the copy, as not in the image (.dockerignore): installs, caches, git, the development key. */
const NOT_COPIED = new Set(["node_modules", ".git", ".turbo", ".dev-issuer"]);

async function run(command: string, args: string[], cwd: string): Promise<{ code: number | null; output: string }> {
  const child = spawn(command, args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const [code] = (await once(child, "exit")) as [number | null];
  return { code, output };
}

/** `du -sk`, in bytes: the files' disk usage, not following the workspace links. */
async function diskUsage(path: string): Promise<number> {
  const { code, output } = await run("du", ["-sk", path], "/");
  if (code !== 0) throw new Error(`du ${path}: ${output}`);
  return Number(output.split("\t", 1)[0]) * 1024;
}

let copy: string;
let install: { code: number | null; output: string };
let redis: RedisHandle;
let receiver: OtlpReceiver;
let config: Awaited<ReturnType<typeof exampleConfig>>;
let devIssuerDir: string;
let api: ServiceProcess | undefined;
let worker: ServiceProcess | undefined;
let apiUrl: string;
let workerUrl: string;

beforeAll(async () => {
  copy = await mkdtemp(join(tmpdir(), "pes-production-install-"));
  await cp(repoRoot, copy, { recursive: true, filter: (source) => !NOT_COPIED.has(basename(source)) });
  // The Dockerfile's step, as it runs there (npm's cache serves the packages CI has just installed).
  install = await run(process.execPath, ["scripts/production-install.mjs"], copy);
  if (install.code !== 0) return;

  redis = await startRedis();
  receiver = await startOtlpReceiver();
  // The example's metrics data source on a port nothing listens on: its actions fail, the execution answers.
  config = await exampleConfig({ metrics: `http://127.0.0.1:${await freePort()}` });
  devIssuerDir = await mkdtemp(join(tmpdir(), "pes-production-issuer-"));
  const [apiPort, workerPort] = [await freePort(), await freePort()];
  apiUrl = `http://127.0.0.1:${apiPort}`;
  workerUrl = `http://127.0.0.1:${workerPort}`;
  const common = {
    REDIS_URL: redis.url,
    QUEUE_PREFIX: uniquePrefix("production-install"),
    CONFIG_DIR: config.dir,
    NODE_ENV: "production",
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    OTEL_BSP_SCHEDULE_DELAY: "20",
  };
  api = startService(
    "api",
    {
      ...common,
      HOST: "127.0.0.1",
      PORT: String(apiPort),
      AUTH_DEV_ISSUER: "true",
      DEV_ISSUER_DIR: devIssuerDir,
      SHUTDOWN_DRAIN_MS: "0",
      ADMIN_DASHBOARD: "true",
      ADMIN_PASSWORD: "production-install-test",
    },
    copy,
  );
  worker = startService("worker", { ...common, WORKER_HTTP_HOST: "127.0.0.1", WORKER_HTTP_PORT: String(workerPort) }, copy);
  await waitForOk(`${apiUrl}/readyz`);
  await waitForOk(`${workerUrl}/readyz`);
}, 240_000);

afterAll(async () => {
  await Promise.all([api?.stop(), worker?.stop()]);
  await redis?.stop();
  await receiver?.close();
  await config?.remove();
  if (devIssuerDir !== undefined) await rm(devIssuerDir, { recursive: true, force: true });
  if (copy !== undefined) await rm(copy, { recursive: true, force: true });
});

describe("the image's production install (scripts/production-install.mjs)", () => {
  it("installs under 100 MB, printing the figure, with no development package", async () => {
    expect(install.code, install.output).toBe(0);
    const printed = /production node_modules: ([\d.]+) MB/.exec(install.output);
    expect(printed, install.output).not.toBeNull();
    process.stdout.write(
      `${install.output
        .split("\n")
        .filter((line) => /^(production node_modules|largest):/.test(line))
        .join("\n")}\n`,
    );

    const measured = await diskUsage(join(copy, "node_modules"));
    expect(measured).toBeLessThan(LIMIT_BYTES);
    expect(Number(printed?.[1]) * 1e6).toBeGreaterThanOrEqual(measured - 1e5);

    const installed = await readdir(join(copy, "node_modules"));
    for (const devOnly of ["redoc", "react", "core-js", "typescript", "testcontainers", "vitest", "supertest", "@biomejs", "echarts", "zrender"]) {
      expect(installed).not.toContain(devOnly);
    }
    // Workspaces the processes do not import are gone, their nested installs with them.
    for (const dir of ["test", "bench", "eval", "packages/local-services", "packages/client"]) expect(existsSync(join(copy, dir))).toBe(false);
  });

  it("draws charts with what it installed: ECharts bundled into @pes/charts, resvg's native renderer", async () => {
    expect(install.code, install.output).toBe(0);
    const draw = `
      import { chartPng, chartSvg } from "@pes/charts";
      const chart = { title: "Latency", kind: "metric", window: { start: 0, time: 60, end: 120 }, series: [{ name: "p99", points: [[0, 1], [60, 4], [120, 4]] }], abnormal: true };
      process.stdout.write(JSON.stringify({ svg: chartSvg(chart).slice(0, 4), png: chartPng(chart).subarray(1, 4).toString() }));
    `;
    const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", draw], { cwd: join(copy, "apps/worker") });
    expect(JSON.parse(stdout)).toEqual({ svg: "<svg", png: "PNG" });
  });

  it("runs the API and a worker: an execution answered, Redoc's page, the queue dashboard, traces", async () => {
    expect(install.code, install.output).toBe(0);
    const key = await loadOrCreateDevKey(devIssuerDir);
    const token = mintDevToken(key, { org: "acme", clientId: "quickstart-cli" });
    const response = await fetch(`${apiUrl}/playbook/execution`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ bookName: "checkout-latency", attributes: { service: "checkout", env: "production" } }),
    });
    const body = (await response.json()) as { highlights?: unknown; error?: unknown };
    expect(response.status, JSON.stringify(body)).toBe(200);
    expect(typeof body.highlights).toBe("string");

    // Redoc's bundle comes from the API's dist: the redoc package is not installed.
    const bundle = await fetch(`${apiUrl}/docs/redoc.standalone.js`);
    expect(bundle.status).toBe(200);
    expect((await bundle.text()).length).toBeGreaterThan(500_000);

    // Bull Board (and its valibot) load on demand, from the production install.
    const dashboard = await fetch(`${apiUrl}/admin/queues`, {
      headers: { authorization: `Basic ${Buffer.from("admin:production-install-test").toString("base64")}` },
    });
    expect(dashboard.status).toBe(200);

    // The OpenTelemetry SDK loads when OTEL_* asks for it: both processes export the execution's trace.
    const spans = await receiver.waitFor((received) => ["pes-api", "pes-worker"].every((service) => received.some((span) => span.service === service)));
    expect(new Set(spans.map((span) => span.service))).toEqual(new Set(["pes-api", "pes-worker"]));
  });
});
