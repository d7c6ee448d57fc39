import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { createApiMetrics, createWorkerMetrics } from "@pes/metrics";
import { parse } from "yaml";
import { beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../support/processes.js";

// The operator kit in ops/: Prometheus' alert rules (with their unit tests) and scrape configuration,
// checked by Prometheus' own promtool; the Grafana dashboard; the compose profile that runs them.
// promtool comes with Debian's prometheus package, which .ci/run installs: a machine without it
// fails here rather than skipping the check.

const run = promisify(execFile);
const ops = join(repoRoot, "ops");
const prometheusDir = join(ops, "prometheus");

async function promtool(args: string[]): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run("promtool", args, { cwd: prometheusDir });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number | string; stdout?: string; stderr?: string };
    if (failed.code === "ENOENT") throw new Error("promtool is not installed: apt-get install prometheus (as .ci/run does)");
    return { code: typeof failed.code === "number" ? failed.code : -1, output: `${failed.stdout ?? ""}${failed.stderr ?? ""}` };
  }
}

interface Rules {
  groups: { name: string; rules: { alert: string; expr: string; labels?: Record<string, string> }[] }[];
}

interface Dashboard {
  uid: string;
  panels: { id: number; type: string; title: string; datasource?: { uid: string }; targets?: { expr: string; datasource: { uid: string } }[] }[];
}

/** Every series name the API and a worker expose (histograms with their _bucket, _sum and _count). */
async function exposedNames(): Promise<Set<string>> {
  const names = new Set<string>();
  const registries = [createApiMetrics({ readQueues: async () => [] }).registry, createWorkerMetrics({ jobNames: ["execute"] }).registry];
  for (const registry of registries) {
    for (const metric of await registry.getMetricsAsJSON()) {
      names.add(metric.name);
      // prom-client's types declare a numeric enum; at run time the type is Prometheus' own word.
      if (String(metric.type) === "histogram") for (const suffix of ["_bucket", "_sum", "_count"]) names.add(metric.name + suffix);
    }
  }
  return names;
}

/** The metric names a PromQL expression reads: ours (pes_), and the process metrics (process_, nodejs_). */
function namesIn(expr: string): string[] {
  return [...expr.matchAll(/\b((?:pes|process|nodejs)_[a-zA-Z0-9_]+)\b/g)].flatMap(([, name]) => (name === undefined ? [] : [name]));
}

let rules: Rules;
let dashboard: Dashboard;
let names: Set<string>;

beforeAll(async () => {
  rules = parse(await readFile(join(prometheusDir, "alerts.yml"), "utf8"));
  dashboard = JSON.parse(await readFile(join(ops, "grafana/dashboards/playbook-execution-service.json"), "utf8"));
  names = await exposedNames();
});

describe("Prometheus alert rules (ops/prometheus/alerts.yml)", () => {
  it("pass promtool check rules", async () => {
    const checked = await promtool(["check", "rules", "alerts.yml"]);
    expect(checked.output).toMatch(/SUCCESS: \d+ rules found/);
    expect(checked.code).toBe(0);
  });

  it("pass their unit tests (promtool test rules alerts.test.yml)", async () => {
    const tested = await promtool(["test", "rules", "alerts.test.yml"]);
    expect(tested.output).toContain("SUCCESS");
    expect(tested.code).toBe(0);
  });

  it("cover the backlog, a missing worker, the error ratio and p99 latency, each with a severity", () => {
    const alerts = rules.groups.flatMap((group) => group.rules);
    expect(alerts.map((rule) => rule.alert)).toEqual(
      expect.arrayContaining(["PesQueueBacklogGrowing", "PesNoWorkerConsuming", "PesExecutionErrorRatioHigh", "PesExecutionLatencyP99High"]),
    );
    for (const rule of alerts) expect(["warning", "critical"], rule.alert).toContain(rule.labels?.severity);
  });

  it("read only metrics the service exposes", () => {
    const unknown = rules.groups.flatMap((group) => group.rules).flatMap((rule) => namesIn(rule.expr).filter((name) => !names.has(name)));
    expect(unknown).toEqual([]);
  });
});

describe("Prometheus scrape configuration (ops/prometheus/prometheus.yml)", () => {
  it("passes promtool check config, with its rule files", async () => {
    const checked = await promtool(["check", "config", "prometheus.yml"]);
    expect(checked.output).toMatch(/SUCCESS: 1 rule files found/);
    expect(checked.code).toBe(0);
  });
});

describe("Grafana dashboard (ops/grafana/dashboards)", () => {
  it("reads only metrics the service exposes", () => {
    const targets = dashboard.panels.flatMap((panel) => panel.targets ?? []);
    expect(targets.length).toBeGreaterThan(15);
    const unknown = targets.flatMap((target) => namesIn(target.expr).filter((name) => !names.has(name)));
    expect(unknown).toEqual([]);
    // Every metric of ours is on it somewhere.
    const shown = new Set(targets.flatMap((target) => namesIn(target.expr)).map((name) => name.replace(/_(bucket|sum|count)$/, "")));
    const ours = [...names].filter((name) => name.startsWith("pes_") && !/_(bucket|sum|count)$/.test(name));
    expect(ours.filter((name) => !shown.has(name))).toEqual([]);
  });

  it("has unique panel ids and queries the Prometheus chosen in its datasource variable", () => {
    const ids = dashboard.panels.map((panel) => panel.id);
    expect(new Set(ids).size).toBe(ids.length);
    // Grafana's variable syntax, compared as text: not a template literal.
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana variable
    const chosen = "${datasource}";
    for (const panel of dashboard.panels.filter((candidate) => candidate.type !== "row")) {
      expect(panel.datasource?.uid, panel.title).toBe(chosen);
      for (const target of panel.targets ?? []) expect(target.datasource.uid, panel.title).toBe(chosen);
    }
  });
});

describe("docker compose --profile monitoring", () => {
  interface Service {
    profiles?: string[];
    environment?: Record<string, string>;
    volumes?: string[];
    healthcheck?: { test?: string[] };
    ports?: string[];
  }
  interface ScrapeConfig {
    job_name: string;
    dns_sd_configs?: { names: string[]; type: string; port: number }[];
  }

  it("adds Prometheus (scraping the API and every worker replica by DNS) and Grafana, only with the profile", async () => {
    const compose: { services: Record<string, Service> } = parse(await readFile(join(repoRoot, "docker-compose.yml"), "utf8"), { merge: true });
    const config: { scrape_configs: ScrapeConfig[] } = parse(await readFile(join(prometheusDir, "prometheus.yml"), "utf8"));
    const { api, worker, prometheus, grafana } = compose.services;

    expect(prometheus?.profiles).toEqual(["monitoring"]);
    expect(grafana?.profiles).toEqual(["monitoring"]);
    expect(api?.profiles).toBeUndefined();
    expect(worker?.profiles).toBeUndefined();
    expect(prometheus?.volumes).toContain("./ops/prometheus:/etc/prometheus:ro");
    expect(grafana?.volumes).toContain("./ops/grafana/dashboards:/var/lib/grafana/dashboards:ro");
    for (const port of [...(prometheus?.ports ?? []), ...(grafana?.ports ?? [])]) expect(port).toMatch(/^127\.0\.0\.1:/);

    // The scrape jobs find each compose service's replicas by name, on the ports the services listen on.
    const job = (name: string) => config.scrape_configs.find((candidate) => candidate.job_name === name)?.dns_sd_configs;
    expect(job("pes-api")).toEqual([expect.objectContaining({ names: ["api"], type: "A", port: Number(api?.environment?.PORT) })]);
    expect(job("pes-worker")).toEqual([expect.objectContaining({ names: ["worker"], type: "A", port: Number(worker?.environment?.WORKER_HTTP_PORT) })]);
  });

  it("checks each worker's readiness on its own listener", async () => {
    const compose: { services: Record<string, Service> } = parse(await readFile(join(repoRoot, "docker-compose.yml"), "utf8"), { merge: true });
    const worker = compose.services.worker;
    expect(worker?.healthcheck?.test?.join(" ")).toContain(`http://127.0.0.1:${worker?.environment?.WORKER_HTTP_PORT}/readyz`);
  });
});
