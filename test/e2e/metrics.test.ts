import { randomUUID } from "node:crypto";
import { rm } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { writeConfigDir } from "@pes/config/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServiceProcess } from "../support/processes.js";
import { postJson, startStack, type Stack } from "../support/stack.js";

/**
 * The metrics of a running service, scraped as Prometheus would: the API's and each worker's, after a
 * few executions with a distinctive attribute value, against data sources with a secret and a
 * distinctive URL. Neither the value, nor the secret, nor the URL, nor a caller's token may appear in
 * any label (or anywhere in the scrape).
 */

const secret = `metrics-secret-${randomUUID()}`;
const attributeValue = `attribute-value-${randomUUID()}`;
const urlPath = `/tenant-${randomUUID()}`;

/** Prometheus' query API with one series; the deploy API fails with a 500. Real HTTP on 127.0.0.1. */
function dataSources(request: IncomingMessage, response: ServerResponse): void {
  const url = request.url ?? "";
  const json = (status: number, body: unknown) => {
    response.writeHead(status, { "content-type": "application/json" });
    response.end(JSON.stringify(body));
  };
  if (url.startsWith(`${urlPath}/api/v1/query`)) {
    const now = Math.floor(Date.now() / 1000);
    const values = Array.from({ length: 30 }, (_, i) => [now - 1800 + i * 60, "0.2"]);
    json(200, { status: "success", data: { resultType: "matrix", result: [{ metric: {}, values }] } });
  } else {
    json(500, { error: "deploy API down" });
  }
}

async function writeConfig(baseUrl: string): Promise<string> {
  const organization = `id: acme
clientIds: [quickstart-cli]
dataSources:
  metrics:
    type: prometheus
    url: ${baseUrl}${urlPath}
    auth: { bearerToken: { env: METRICS_E2E_SECRET } }
  deploys:
    type: http
    url: ${baseUrl}${urlPath}/deploys
    headers: { X-Api-Key: { env: METRICS_E2E_SECRET } }
`;
  const playbook = `name: latency
monitorNames: ["Latency of {{service}}"]
requiredAttributes: [service]
gadgets:
  - title: "Latency of {{service}}"
    actions:
      - { title: p99, dataSource: metrics, prometheus: { query: 'p99{service={{service}}}' } }
      - { title: last deploy, dataSource: deploys, http: { path: "/last/{{service}}", answerField: at } }
`;
  return writeConfigDir({ organizations: [organization], playbooks: { acme: [playbook] } });
}

let server: Server;
let configDir: string;
let stack: Stack;
const tokensSent: string[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    request.resume();
    request.on("end", () => dataSources(request, response));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  configDir = await writeConfig(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  stack = await startStack({
    name: "metrics",
    configDir,
    workers: 2,
    // Short, for the caller left waiting with no worker at the end; every scrape reads the queue anew.
    // Its three identical requests are three executions: no coalescing.
    apiEnv: { EXECUTION_TIMEOUT_MS: "2000", METRICS_QUEUE_CACHE_MS: "0", COALESCE_BUCKET_SECONDS: "0" },
    workerEnv: { METRICS_E2E_SECRET: secret },
  });
});

afterAll(async () => {
  await stack?.stop();
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  if (configDir !== undefined) await rm(configDir, { recursive: true, force: true });
});

/** A worker's own listener, from the port it logged. */
function workerBase(worker: ServiceProcess | undefined): string {
  const port = /"port":(\d+),"msg":"worker http listening/.exec(worker?.output() ?? "")?.[1];
  if (port === undefined) throw new Error(`the worker logged no HTTP port:\n${worker?.output()}`);
  return `http://127.0.0.1:${port}`;
}

async function scrape(base: string): Promise<string> {
  const response = await fetch(`${base}/metrics`);
  expect(response.status).toBe(200);
  return response.text();
}

/** Every `name{labels} value` line of a scrape, as [name, labels]. */
function series(text: string): [string, Record<string, string>][] {
  return text
    .split("\n")
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map((line) => {
      const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? \S+$/.exec(line);
      if (match?.[1] === undefined) throw new Error(`not a sample line: ${line}`);
      const labels = Object.fromEntries(
        [...(match[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map(([, name, value]) => [name, value]),
      );
      return [match[1], labels];
    });
}

/** The label values a metric has for `label` in a scrape. */
function labelValues(text: string, metric: string, label: string): string[] {
  return [...new Set(series(text).flatMap(([name, labels]) => (name === metric && labels[label] !== undefined ? [labels[label]] : [])))].sort();
}

async function execute(body: unknown): Promise<{ status: number; body: unknown }> {
  const token = stack.token();
  tokensSent.push(token);
  return postJson(`${stack.baseUrl}/playbook/execution`, token, body);
}

describe("metrics of a running service", () => {
  it("API and workers expose what they did, labelled by routes and configuration names only", async () => {
    const run = { bookName: "latency", attributes: { service: attributeValue } };
    for (let i = 0; i < 3; i++) expect((await execute(run)).status).toBe(200);
    expect((await execute({ title: "Latency of", time: new Date().toISOString() })).status).toBe(400);
    expect((await fetch(`${stack.baseUrl}/playbook/executions/${attributeValue}`)).status).toBe(404);

    const api = await scrape(stack.baseUrl);
    const workers = await Promise.all(stack.workers.map((worker) => scrape(workerBase(worker))));

    // The API: requests by route pattern and status.
    expect(api).toContain('pes_http_request_duration_seconds_count{method="POST",route="/playbook/execution",status="200"} 3');
    expect(api).toContain('pes_http_request_duration_seconds_count{method="POST",route="/playbook/execution",status="400"} 1');
    expect(api).toContain('pes_http_request_duration_seconds_count{method="GET",route="unmatched",status="404"} 1');
    expect(labelValues(api, "pes_http_request_duration_seconds_count", "route")).toEqual(
      expect.arrayContaining(["/playbook/execution", "/readyz", "unmatched"]),
    );
    expect(labelValues(api, "pes_reply_timeouts_total", "job_state")).toEqual(["active", "completed", "failed", "queued", "unknown", "unreadable"]);
    expect(labelValues(api, "pes_queue_jobs", "state")).toEqual(["active", "delayed", "failed", "prioritized", "waiting"]);
    expect(api).toMatch(/^pes_queue_oldest_waiting_job_age_seconds\{queue="playbook-executions"\} \d/m);
    expect(api).toMatch(/^process_cpu_seconds_total \d/m);

    // The workers, together: three executions, each with one action that succeeded and one that failed.
    const total = (metric: string, labels: Record<string, string>) =>
      workers
        .flatMap((text) => text.split("\n"))
        .filter((line) => series(line).some(([name, found]) => name === metric && Object.entries(labels).every(([k, v]) => found[k] === v)))
        .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(" ") + 1)), 0);
    expect(total("pes_jobs_total", { job_name: "execute", outcome: "result" })).toBe(3);
    expect(total("pes_actions_total", { org: "acme", connector: "prometheus", data_source: "metrics", outcome: "ok" })).toBe(3);
    expect(total("pes_actions_total", { org: "acme", connector: "http", data_source: "deploys", outcome: "failed" })).toBe(3);
    expect(total("pes_action_duration_seconds_count", { org: "acme", connector: "prometheus", data_source: "metrics" })).toBe(3);
    expect(total("pes_job_duration_seconds_count", { job_name: "execute" })).toBe(3);
    for (const text of workers) {
      expect(labelValues(text, "pes_jobs_total", "outcome")).toEqual(["error", "interrupted", "result", "timeout"]);
      expect(text).toMatch(/^nodejs_eventloop_lag_seconds \d/m);
      // The batch lane's slots: a quarter of the default WORKER_CONCURRENCY (50), fewer only while busy.
      const slots = Number(/^pes_worker_background_slots\{queue="playbook-batch-executions"\} (\d+)$/m.exec(text)?.[1]);
      expect(slots).toBeGreaterThanOrEqual(1);
      expect(slots).toBeLessThanOrEqual(13);
    }

    // Nothing a caller sent and nothing secret, in a label or anywhere else.
    const everything = [api, ...workers].join("\n");
    const needles = new Map<string, string>([
      ["attribute value", attributeValue],
      ["data source secret", secret],
      ["data source URL path", urlPath],
      ...tokensSent.map((token, index): [string, string] => [`caller token #${index}`, token]),
    ]);
    expect([...needles].filter(([, needle]) => everything.includes(needle)).map(([name]) => name)).toEqual([]);
    for (const [name, labels] of series(everything)) {
      for (const value of Object.values(labels)) expect(value.length, `${name} ${JSON.stringify(labels)}`).toBeLessThan(64);
    }
  });

  it("the API reports the backlog while no worker runs, and the caller answered at its deadline", async () => {
    await Promise.all(stack.workers.map((worker) => worker.stop()));

    const pending = execute({ bookName: "latency", attributes: { service: "checkout" } });
    // Read on a scrape: wait for a reading taken after the job was added (bounded by its deadline).
    let api = await scrape(stack.baseUrl);
    for (let attempt = 0; attempt < 40 && !api.includes('pes_queue_jobs{queue="playbook-executions",state="waiting"} 1'); attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      api = await scrape(stack.baseUrl);
    }
    expect(api).toContain('pes_queue_jobs{queue="playbook-executions",state="waiting"} 1');
    const age = Number(/^pes_queue_oldest_waiting_job_age_seconds\{queue="playbook-executions"\} (\S+)$/m.exec(api)?.[1]);
    expect(age).toBeGreaterThanOrEqual(0);

    expect(await pending).toEqual({ status: 200, body: { error: "Execution timed out after 2000 ms (still queued: no worker picked it up)" } });
    expect(await scrape(stack.baseUrl)).toContain('pes_reply_timeouts_total{job_state="queued"} 1');
  });
});
