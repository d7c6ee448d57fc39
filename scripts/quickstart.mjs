#!/usr/bin/env node
// The README's first command: starts Redis (REDIS_URL, else a local redis-server), a demo Prometheus
// holding a synthetic incident, a small Loki-speaking server with the incident's logs and a deploy API
// with the deploy before it, the API with the development issuer, and WORKERS worker processes; then
// prints a token and curl commands that investigate the incident. Ctrl-C stops everything.
import { spawn } from "node:child_process";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseDocument } from "yaml";
import { loadOrCreateDevKey, mintDevToken } from "@pes/dev-issuer";
import { demoDeploy, demoIncidentLogs, demoIncidentOpenMetrics, startDemoDeploys, startFakeLoki, startPrometheus, startRedis } from "@pes/local-services";

const root = resolve(fileURLToPath(import.meta.url), "../..");
const port = Number(process.env.PORT ?? 8080);
const workers = Number(process.env.WORKERS ?? 1);
const cleanups = [];
const children = [];

function say(line = "") {
  process.stdout.write(`${line}\n`);
}

async function stopAll() {
  for (const child of children) child.kill("SIGTERM");
  await Promise.all(children.map((child) => new Promise((done) => (child.exitCode !== null ? done() : child.once("exit", done)))));
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
}

function start(name, script, env) {
  const child = spawn(process.execPath, [join(root, script)], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  const prefix = (stream, out) =>
    stream.on("data", (chunk) => {
      for (const line of chunk.toString().split("\n")) if (line) out.write(`[${name}] ${line}\n`);
    });
  prefix(child.stdout, process.stdout);
  prefix(child.stderr, process.stderr);
  child.once("exit", (code, signal) => {
    if (!stopping) {
      say(`\n${name} exited (${signal ?? code}); stopping.`);
      shutdown(1);
    }
  });
  children.push(child);
  return child;
}

async function waitUntilReady(url, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ok = await fetch(url).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`);
}

let stopping = false;
async function shutdown(code) {
  if (stopping) return;
  stopping = true;
  await stopAll();
  process.exit(code);
}
process.on("SIGINT", () => shutdown(0));
process.on("SIGTERM", () => shutdown(0));

try {
  const redis = await startRedis().catch((error) => {
    throw new Error(`Redis is needed: set REDIS_URL to a Redis 6.2+ server, or install redis-server (Debian: apt-get install redis-server). ${error.message}`);
  });
  cleanups.push(() => redis.stop());
  say(`Redis:      ${redis.url.replace(/\/\/[^@]*@/, "//***@")}`);

  // A copy of the example configuration whose data sources point at the demo's servers.
  const configDir = await mkdtemp(join(tmpdir(), "pes-quickstart-"));
  cleanups.push(() => rm(configDir, { recursive: true, force: true }));
  await cp(join(root, "config/example"), configDir, { recursive: true });
  const orgFile = join(configDir, "organizations/acme.yaml");
  const doc = parseDocument(await readFile(orgFile, "utf8"));

  const incidentAt = new Date(Math.floor((Date.now() - 20 * 60_000) / 60_000) * 60_000);
  const deploy = demoDeploy(incidentAt);
  try {
    const prometheus = await startPrometheus({ openMetrics: demoIncidentOpenMetrics({ incidentAt, end: new Date() }) });
    cleanups.push(() => prometheus.stop());
    doc.setIn(["dataSources", "metrics", "url"], prometheus.url);
    say(`Prometheus: ${prometheus.url} (demo data: checkout latency jumps 4x and errors 3x at ${incidentAt.toISOString()})`);
  } catch (error) {
    say(`Prometheus: not started (${error.message}); investigations will report the data source as unreachable.`);
  }
  const loki = await startFakeLoki({ streams: demoIncidentLogs({ incidentAt, end: new Date() }) });
  cleanups.push(() => loki.close());
  doc.setIn(["dataSources", "logs", "url"], loki.url);
  say(`Loki:       ${loki.url} (demo logs: checkout logs a new error from ${incidentAt.toISOString()})`);
  const deploys = await startDemoDeploys({ checkout: deploy });
  cleanups.push(() => deploys.close());
  doc.setIn(["dataSources", "deploys", "url"], deploys.url);
  say(`Deploys:    ${deploys.url} (demo deploy: checkout ${deploy.version} at ${deploy.deployedAt.toISOString()})`);
  await writeFile(orgFile, doc.toString());

  const devIssuerDir = process.env.DEV_ISSUER_DIR ?? join(root, ".dev-issuer");
  const common = { REDIS_URL: redis.url, CONFIG_DIR: configDir, QUEUE_PREFIX: process.env.QUEUE_PREFIX ?? "pes", DEV_ISSUER_DIR: devIssuerDir };
  // No readiness drain on Ctrl-C: no load balancer watches a quickstart.
  start("api", "apps/api/dist/main.js", { ...common, PORT: String(port), AUTH_DEV_ISSUER: "true", SHUTDOWN_DRAIN_MS: "0" });
  // Each worker's /metrics, /healthz and /readyz on a free port (its log says which): several may run.
  const workerEnv = { ...common, WORKER_HTTP_PORT: "0", WORKER_HTTP_HOST: "127.0.0.1" };
  for (let i = 1; i <= workers; i++) start(workers === 1 ? "worker" : `worker-${i}`, "apps/worker/dist/main.js", workerEnv);
  await waitUntilReady(`http://127.0.0.1:${port}/readyz`, 30_000);

  const token = mintDevToken(await loadOrCreateDevKey(devIssuerDir), { org: "acme" });
  const base = `http://127.0.0.1:${port}`;
  const body = JSON.stringify({ title: "High error rate on checkout in production", time: incidentAt.toISOString() });
  say(`
The service is up: API on ${base}, ${workers} worker process${workers === 1 ? "" : "es"}. Ctrl-C stops everything.

  export TOKEN=${token}

  curl -s ${base}/playbook -H "Authorization: Bearer $TOKEN"

  curl -s ${base}/playbook/execution -H "Authorization: Bearer $TOKEN" \\
    -H 'Content-Type: application/json' -d '${body}'

More tokens: npm run token -- --org acme
`);
} catch (error) {
  say(`\nquickstart failed: ${error.message}`);
  await shutdown(1);
}
