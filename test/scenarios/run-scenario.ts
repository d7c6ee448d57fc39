import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EvidenceBundle, type PlaybookExecutionResult } from "@pes/contracts";
import { startAlertmanager, startFakeElasticsearch, startFakeKubernetes, startFakeLoki, startPrometheus, toOpenMetrics } from "@pes/local-services";
import { exampleConfig, startStack, type Stack } from "../support/stack.js";
import type { Scenario } from "./data/scenario.js";

/** A scenario's servers and the service (API and worker processes) configured to query them. */
export interface RunningScenario {
  scenario: Scenario;
  /** Each data source's base URL, by its name in organizations/shop.yaml. */
  urls: Record<"metrics" | "alerts" | "logs" | "proxy-logs" | "cluster", string>;
  /** What the API server wants: its token, and the CA its certificate chains to. */
  cluster: { token: string; ca: string };
  stack: Stack;
  /** Asks the service about the scenario's issue, as an on-call engineer would: its title and time. */
  investigate(): Promise<PlaybookExecutionResult>;
  /** The evidence bundle the worker kept of the last investigation, read back through the API. */
  evidence(): Promise<EvidenceBundle>;
  stop(): Promise<void>;
}

/** The variable the worker reads the service account's token from (the config copy names it). */
const TOKEN_VARIABLE = "SHOP_KUBERNETES_TOKEN";

/**
 * Starts everything a scenario needs, once per test file: a real Prometheus backfilled with its history,
 * a real Alertmanager holding its alerts, local Loki, Elasticsearch and Kubernetes API servers (the last
 * over TLS with its own CA, wanting a bearer token) holding its logs, documents and objects, and the API
 * and a worker with a copy of config/example whose `shop` data sources point at them. The issue time is
 * the last whole minute 10 minutes ago: Alertmanager serves firing alerts only, and its alerts must have
 * started before it.
 */
export async function startScenario(build: (issueAt: Date) => Scenario): Promise<RunningScenario> {
  const issueAt = new Date(Math.floor(Date.now() / 60_000) * 60_000 - 10 * 60_000);
  const scenario = build(issueAt);
  const { data } = scenario;
  const stops: Array<() => Promise<unknown>> = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop();
  };
  try {
    const prometheus = await startPrometheus({ openMetrics: toOpenMetrics(data.series) });
    stops.push(() => prometheus.stop());
    const alertmanager = await startAlertmanager();
    stops.push(() => alertmanager.stop());
    await alertmanager.postAlerts(data.alerts);
    const loki = await startFakeLoki({ streams: data.logStreams });
    stops.push(() => loki.close());
    const elasticsearch = await startFakeElasticsearch({ documents: data.documents });
    stops.push(() => elasticsearch.close());

    const tls = await clusterCertificates();
    stops.push(() => rm(tls.dir, { recursive: true, force: true }));
    const token = randomBytes(24).toString("hex");
    const kubernetes = await startFakeKubernetes(data.kubernetes, { token, https: { key: tls.key, cert: tls.cert } });
    stops.push(() => kubernetes.close());

    const urls = { metrics: prometheus.url, alerts: alertmanager.url, logs: loki.url, "proxy-logs": elasticsearch.url, cluster: kubernetes.url };
    const config = await exampleConfig(urls, {
      organization: "shop",
      fields: { cluster: { tls: { ca: { file: tls.caFile } }, auth: { bearerToken: { env: TOKEN_VARIABLE } } } },
      // The shop keeps its executions' evidence: each scenario's bundle replays offline (bundles/).
      organizationFields: { evidence: { keep: true, retentionDays: 1 } },
    });
    stops.push(() => config.remove());
    const stack = await startStack({ name: `scenario-${scenario.name}`, configDir: config.dir, workerEnv: { [TOKEN_VARIABLE]: token } });
    stops.push(() => stack.stop());
    let executionId: string | undefined;
    return {
      scenario,
      urls,
      cluster: { token, ca: tls.ca },
      stack,
      async investigate() {
        const response = await fetch(`${stack.baseUrl}/playbook/execution`, {
          method: "POST",
          headers: { authorization: `Bearer ${stack.token({ org: "shop" })}`, "content-type": "application/json" },
          body: JSON.stringify({ ...scenario.request, time: issueAt.toISOString() }),
        });
        const body: unknown = await response.json();
        if (response.status !== 200) throw new Error(`the investigation answered ${response.status}: ${JSON.stringify(body)}`);
        executionId = response.headers.get("x-execution-id") ?? undefined;
        return body as PlaybookExecutionResult;
      },
      async evidence() {
        if (executionId === undefined) throw new Error("no investigation yet");
        const response = await fetch(`${stack.baseUrl}/playbook/execution/${executionId}/evidence`, {
          headers: { authorization: `Bearer ${stack.token({ org: "shop" })}` },
        });
        if (response.status !== 200) throw new Error(`the evidence answered ${response.status}`);
        return EvidenceBundle.parse(await response.json());
      },
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/** A CA and a certificate it signed for 127.0.0.1, as a cluster's API server has (openssl, EC P-256, one day). */
async function clusterCertificates(): Promise<{ dir: string; caFile: string; ca: string; key: Buffer; cert: Buffer }> {
  const dir = await mkdtemp(join(tmpdir(), "pes-scenario-ca-"));
  const openssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  openssl("req", "-x509", ...ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "1", "-subj", "/CN=shop-cluster-ca");
  openssl("req", ...ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=kube-apiserver");
  await writeFile(join(dir, "server.ext"), "subjectAltName=IP:127.0.0.1\n");
  openssl(
    "x509",
    "-req",
    "-in",
    "server.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "server.pem",
    "-days",
    "1",
    "-extfile",
    "server.ext",
  );
  return {
    dir,
    caFile: join(dir, "ca.pem"),
    ca: await readFile(join(dir, "ca.pem"), "utf8"),
    key: await readFile(join(dir, "server.key")),
    cert: await readFile(join(dir, "server.pem")),
  };
}
