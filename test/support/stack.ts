import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseDocument } from "yaml";
import { loadOrCreateDevKey, mintDevToken } from "@pes/dev-issuer";
import { freePort, startRedis, uniquePrefix, type RedisHandle, type TestHttpServer } from "@pes/local-services";
import { afterEach, beforeEach } from "vitest";
import { startHoldingPrometheus } from "./holding-prometheus.js";
import { repoRoot, startService, waitForOk, type ServiceProcess } from "./processes.js";

/**
 * The example configuration copied to a temp dir, with data-source URLs rewritten for the test (in
 * acme's file unless `organization` says which), and any other data-source fields set (`fields`: a TLS
 * CA, an auth reference).
 */
export async function exampleConfig(
  dataSourceUrls: Record<string, string>,
  options: { organization?: string; fields?: Record<string, Record<string, unknown>>; organizationFields?: Record<string, unknown> } = {},
): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "pes-e2e-config-"));
  await cp(join(repoRoot, "config/example"), dir, { recursive: true });
  const orgFile = join(dir, `organizations/${options.organization ?? "acme"}.yaml`);
  const doc = parseDocument(await readFile(orgFile, "utf8"));
  for (const [name, url] of Object.entries(dataSourceUrls)) doc.setIn(["dataSources", name, "url"], url);
  for (const [name, fields] of Object.entries(options.fields ?? {})) {
    for (const [field, value] of Object.entries(fields)) doc.setIn(["dataSources", name, field], doc.createNode(value));
  }
  for (const [field, value] of Object.entries(options.organizationFields ?? {})) doc.setIn([field], doc.createNode(value));
  await writeFile(orgFile, doc.toString());
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

export interface Stack {
  /** The first API's address. */
  baseUrl: string;
  /** Every API's address, the first one's first. */
  baseUrls: string[];
  redisUrl: string;
  prefix: string;
  /** The first API. */
  api: ServiceProcess;
  apis: ServiceProcess[];
  workers: ServiceProcess[];
  /** Starts one more worker process with the stack's settings (plus `env`). */
  addWorker(env?: Record<string, string>): Promise<ServiceProcess>;
  /** A development token; `subject` and `scope` (e.g. `pes:org-admin`) when given. */
  token(claims?: { org?: string; clientId?: string; subject?: string; scope?: string }): string;
  stop(): Promise<void>;
}

/**
 * Redis (REDIS_URL or a spawned redis-server, with a unique queue prefix), `apis` API processes (one by
 * default) with the development issuer, and `workers` worker processes, all real processes over real
 * HTTP and Redis.
 */
export async function startStack(options: {
  name: string;
  configDir: string;
  apis?: number;
  workers?: number;
  apiEnv?: Record<string, string>;
  workerEnv?: Record<string, string>;
  /**
   * A Redis of the caller's (e.g. one it will crash and restart, or a Redis Cluster's `redis+cluster://`
   * URL); it stays up after stop().
   */
  redis?: Pick<RedisHandle, "url">;
}): Promise<Stack> {
  const own = options.redis === undefined ? await startRedis() : undefined;
  const redis = options.redis ?? own;
  if (redis === undefined) throw new Error("no Redis");
  const prefix = uniquePrefix(options.name);
  const devIssuerDir = await mkdtemp(join(tmpdir(), "pes-e2e-issuer-"));
  const ports: number[] = [];
  for (let i = 0; i < (options.apis ?? 1); i++) ports.push(await freePort());
  const common = { REDIS_URL: redis.url, QUEUE_PREFIX: prefix, CONFIG_DIR: options.configDir, DEV_ISSUER_DIR: devIssuerDir };
  // Each worker's own HTTP listener (/metrics, /healthz, /readyz) on a free port: several run at once.
  const workerEnv = { ...common, WORKER_HTTP_PORT: "0", WORKER_HTTP_HOST: "127.0.0.1", ...options.workerEnv };
  // No readiness drain on stop: no load balancer watches these processes. The APIs share the development
  // key (DEV_ISSUER_DIR): a token is good at each.
  const apiEnv = { ...common, HOST: "127.0.0.1", AUTH_DEV_ISSUER: "true", SHUTDOWN_DRAIN_MS: "0" };
  const apis = ports.map((port) => startService("api", { ...apiEnv, PORT: String(port), ...options.apiEnv }));
  const [api] = apis;
  if (api === undefined) throw new Error("a stack needs an API");
  const workers: ServiceProcess[] = [];
  const addWorker = async (env: Record<string, string> = {}) => {
    const worker = startService("worker", { ...workerEnv, ...env });
    workers.push(worker);
    await worker.waitForLine(/worker ready/i);
    return worker;
  };
  const baseUrls = ports.map((port) => `http://127.0.0.1:${port}`);
  const baseUrl = baseUrls[0] ?? "";
  try {
    for (const url of baseUrls) await waitForOk(`${url}/readyz`);
    for (let i = 0; i < (options.workers ?? 1); i++) await addWorker();
  } catch (error) {
    await Promise.all([...apis, ...workers].map((service) => service.stop("SIGKILL")));
    await own?.stop();
    throw error;
  }
  const key = await loadOrCreateDevKey(devIssuerDir);
  return {
    baseUrl,
    baseUrls,
    redisUrl: redis.url,
    prefix,
    api,
    apis,
    workers,
    addWorker,
    token: (claims = {}) =>
      mintDevToken(key, {
        org: claims.org ?? "acme",
        clientId: claims.clientId ?? "quickstart-cli",
        ...(claims.subject === undefined ? {} : { subject: claims.subject }),
        ...(claims.scope === undefined ? {} : { scope: claims.scope }),
      }),
    async stop() {
      await Promise.all([...apis, ...workers].map((service) => service.stop()));
      await own?.stop();
      await rm(devIssuerDir, { recursive: true, force: true });
    },
  };
}

/** POSTs JSON with the bearer token; returns status and parsed body. */
export async function postJson(url: string, token: string, body: unknown): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

/** Short locks: a killed worker's job is found stalled within seconds, not after the default 30 s. */
export const FAST_STALLS = { WORKER_LOCK_DURATION_MS: "1500", WORKER_STALLED_INTERVAL_MS: "1000" };

/** What each test of a file gets from eachTestOnTheExample: its stack and Redis are its own to start. */
export interface ExampleWorld {
  /** A Prometheus that answers a flat series and can hold its answers (`hold()` … `release()`). */
  prometheus: TestHttpServer;
  config: Awaited<ReturnType<typeof exampleConfig>>;
  /** Set by the test; stopped after it. */
  stack?: Stack | undefined;
  /** A Redis of the test's own, when it crashes or restarts one; stopped after it. */
  redis?: RedisHandle | undefined;
}

/**
 * For each test of the file: a holding Prometheus and the example configuration pointed at it; after the
 * test, whatever stack and Redis it started are stopped, then those two.
 */
export function eachTestOnTheExample(): ExampleWorld {
  const world = {} as ExampleWorld;
  beforeEach(async () => {
    world.prometheus = await startHoldingPrometheus();
    world.config = await exampleConfig({ metrics: world.prometheus.url });
  });
  afterEach(async () => {
    await world.stack?.stop();
    world.stack = undefined;
    await world.redis?.stop();
    world.redis = undefined;
    await world.prometheus.close();
    await world.config.remove();
  });
  return world;
}
