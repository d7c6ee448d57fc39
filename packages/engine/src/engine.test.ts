import { createHash } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import type { ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setImmediate as turn } from "node:timers/promises";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { resolveCatalogSecrets, type Catalog } from "@pes/config";
import { catalogOf } from "@pes/config/testing";
import { runAction, type AnyActionRequest, type DataSource, type Observed } from "@pes/connectors";
import { canonicalJson, EvidenceBundle, ServiceGraphObservation, type Observation } from "@pes/contracts";
import type { ExecutionJob, PlaybookExecutionResult } from "@pes/contracts";
import {
  demoIncidentOpenMetrics,
  sendJson,
  startPrometheus,
  startTestHttpServer,
  toOpenMetrics,
  type LocalPrometheus,
  type SeenRequest,
  type SyntheticSeries,
} from "@pes/local-services";
import { createLogger } from "@pes/logger";
import { createWorkerMetrics } from "@pes/metrics";
import { replayBundle } from "@pes/analysis";
import { createEngine, type ActionReport, type Engine, type EngineDeps, type KeptEvidence } from "./engine.js";
import { createLocalQuerySlots } from "./query-slots.js";

const INCIDENT = new Date("2026-11-20T14:05:00Z");
const NOW = () => new Date("2026-11-20T18:00:00Z");
const logger = createLogger({ name: "engine-test", level: "silent" });

const P99 = "histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket{service={{service}}}[5m])))";
const ERROR_RATIO = 'sum(rate(http_requests_total{service={{service}}, code=~"5.."}[5m])) / sum(rate(http_requests_total{service={{service}}}[5m]))';
const REQUEST_RATE = "sum(rate(http_requests_total{service={{service}}}[5m]))";

/** A JSON API on 127.0.0.1 whose routes the tests choose; it counts requests in flight. */
interface TestApi {
  url: string;
  inFlight: number;
  maxInFlight: number;
  held: ServerResponse[];
  /** Every request it got, in order. */
  requests: SeenRequest[];
  route: (request: SeenRequest, response: ServerResponse) => void;
  onArrival?: () => void;
  close(): Promise<void>;
}

async function startApi(): Promise<TestApi> {
  const api: TestApi = {
    url: "",
    inFlight: 0,
    maxInFlight: 0,
    held: [],
    requests: [],
    route: (_request, response) => sendJson(response, 200, { ok: true }),
    close: () => server.close(),
  };
  const server = await startTestHttpServer((request, response) => {
    api.inFlight += 1;
    api.maxInFlight = Math.max(api.maxInFlight, api.inFlight);
    response.on("close", () => {
      api.inFlight -= 1;
    });
    api.route(request, response);
    api.onArrival?.();
  });
  api.url = server.url;
  api.requests = server.requests;
  return api;
}

/** Organization acme with these data sources and playbooks, loaded as the worker loads CONFIG_DIR. */
async function loadCatalog(dataSources: Record<string, DataSource>, playbooks: object[]): Promise<Catalog> {
  return catalogOf({ organizations: [{ id: "acme", clientIds: ["client-1"], dataSources }], playbooks: { acme: playbooks } });
}

/** Waits, a turn of the event loop at a time, until `done` holds. */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await turn();
}

function job(bookName: string, attributes: Record<string, string> = { service: "checkout" }): ExecutionJob {
  return {
    orgId: "acme",
    requestId: "req-1",
    v: 1,
    replyTo: "api-1",
    deadline: Date.now() + 60_000,
    bookName,
    time: "2026-11-20T14:08:00Z",
    attributes,
    liveRun: false,
  };
}

/** `checked`'s playbooks of acme with `current`'s data sources of acme. */
function withDataSourcesOf(checked: Catalog, current: Catalog): Catalog {
  const playbooks = checked.organizations.get("acme");
  const dataSources = current.organizations.get("acme")?.dataSources;
  if (playbooks === undefined || dataSources === undefined) throw new Error("both catalogs must hold acme");
  return { organizations: new Map([["acme", { ...playbooks, dataSources }]]) };
}

/** What a stand-in for a connector observed, as a run of it gives it (a data source without secrets). */
function observed(observation: Observation): Observed {
  return { observation, redact: (text) => text };
}

function engineWith(catalog: Catalog, overrides: Partial<EngineDeps> = {}) {
  return createEngine({ catalog, secrets: new Map(), logger, actionTimeoutMs: 10_000, maxConcurrentActions: 8, now: NOW, ...overrides });
}

/** A result without the wall time its budget says it took, which no two runs share. */
function withoutWallTime(result: PlaybookExecutionResult): PlaybookExecutionResult {
  return result.budget === undefined ? result : { ...result, budget: { ...result.budget, spent: { ...result.budget.spent, wallTimeMs: 0 } } };
}

/** Runs a job as the worker does (`investigate`), for its result. */
async function resultOf(engine: Engine, ...run: Parameters<Engine["investigate"]>): Promise<PlaybookExecutionResult> {
  return (await engine.investigate(...run)).result;
}

describe("engine over a real Prometheus and a real HTTP API", () => {
  let prometheus: LocalPrometheus;
  let api: TestApi;
  let catalog: Catalog;

  beforeAll(async () => {
    prometheus = await startPrometheus({ openMetrics: demoIncidentOpenMetrics({ incidentAt: INCIDENT }) });
    api = await startApi();
    const checkoutLatency = (name: string, mitigations: object[]) => ({
      name,
      monitorNames: [`${name} on {{service}}`],
      optionalAttributes: ["team", "replicas"],
      gadgets: [
        {
          title: "Latency of {{service}}",
          args: { service: "{{service}}", quantile: 0.99 },
          actions: [{ title: "p99 latency", dataSource: "metrics", prometheus: { query: P99, unit: "s" } }],
        },
        {
          title: "Changes",
          actions: [
            {
              title: "Last deploy of {{service}}",
              dataSource: "deploys",
              http: { path: "/deploys/{{service}}", answerField: "version", change: { kind: "deploy", timeField: "deployedAt", subject: "{{service}}" } },
            },
          ],
        },
      ],
      mitigations,
    });
    catalog = await loadCatalog(
      {
        metrics: { type: "prometheus", url: prometheus.url },
        deploys: { type: "http", url: api.url },
        // Never asked: its address makes the silence form's link, which no bundle holds.
        alerts: { type: "alertmanager", url: "http://127.0.0.1:9", externalUrl: "https://alertmanager.internal.example/" },
      },
      [
        checkoutLatency("Checkout latency, every mitigation", [
          { toolName: "rollback", url: "https://deploy.example.com/rollback/{{service}}", when: { likelyCause: "deploy" } },
          // Its name fills, its URL cannot (the issue has no team): the worker offers it to no one.
          { toolName: "runbook", url: "https://runbooks.example/{{team}}/{{service}}" },
          { toolName: "scale", customName: "Scale {{service}} out", action: { replicas: "{{replicas}}" }, when: { abnormal: true } },
          { toolName: "pager", customName: "Page the owners of {{service}}", when: { abnormal: false } },
          {
            toolName: "alertmanager",
            customName: "Silence {{service}} for 2h",
            silence: { dataSource: "alerts", matchers: [{ name: "service", value: "{{service}}" }], duration: "2h" },
            when: { abnormal: true },
          },
        ]),
        {
          name: "Checkout latency",
          monitorNames: ["High latency on {{service}}"],
          gadgets: [
            {
              title: "Latency of {{service}}",
              args: { service: "{{service}}", quantile: 0.99 },
              actions: [{ title: "p99 latency", dataSource: "metrics", prometheus: { query: P99, unit: "s" } }],
            },
            {
              title: "Errors and traffic",
              actions: [
                { title: "error ratio", dataSource: "metrics", prometheus: { query: ERROR_RATIO, unit: "ratio" } },
                { title: "request rate", dataSource: "metrics", prometheus: { query: REQUEST_RATE, unit: "req/s" } },
              ],
            },
            {
              title: "Changes",
              actions: [
                {
                  title: "Last deploy of {{service}}",
                  dataSource: "deploys",
                  http: {
                    path: "/deploys/{{service}}",
                    answerField: "version",
                    change: { kind: "deploy", timeField: "deployedAt", subject: "{{service}}" },
                  },
                },
              ],
            },
          ],
          mitigations: [
            { toolName: "rollback", url: "https://deploy.example.com/rollback/{{service}}", when: { likelyCause: "deploy" } },
            { toolName: "pager", customName: "Page the owners of {{service}}", when: { abnormal: true } },
            { toolName: "grafana", url: "https://grafana.example/d/x?var-service={{service}}" },
          ],
        },
      ],
    );
  });
  afterAll(async () => {
    await prometheus?.stop();
    await api?.close();
  });

  it("runs every action, summarizes per gadget and leads with the deploy before the first symptom", async () => {
    api.route = (_request, response) => sendJson(response, 200, { version: "v1.2.3", deployedAt: "2026-11-20T14:01:00Z" });
    const result = await resultOf(engineWith(catalog), job("Checkout latency"));

    expect(result.error).toBeUndefined();
    expect(result.actionResults?.map((action) => action.title)).toEqual(["p99 latency", "error ratio", "request rate", "Last deploy of checkout"]);
    const [latency, , , deploy] = result.actionResults ?? [];
    expect(deploy?.mostImportantLink).toBe(`${api.url}/deploys/checkout`);
    const link = new URL(latency?.mostImportantLink ?? "");
    expect(link.searchParams.get("g0.expr")).toBe(P99.replaceAll("{{service}}", '"checkout"'));
    expect(link.searchParams.get("g0.range_input")).toBe("75m");

    // One summary per gadget, in playbook order, with its args filled (the analysis words what it found).
    expect(result.gadgetsHighlights?.map(({ title, args }) => ({ title, args }))).toEqual([
      { title: "Latency of checkout", args: { service: "checkout", quantile: 0.99 } },
      { title: "Errors and traffic" },
      { title: "Changes" },
    ]);
    // The demo's p99 goes from ≈0.49 s to ≈1.95 s; the 5xx share from 1 % to 3 %, over the 5 minutes
    // rate() takes to see only the incident: both are dated when they began to move, at 14:05.
    expect(result.verdict).toEqual({
      conclusion: "cause",
      cause: {
        kind: "deploy",
        subject: "checkout",
        detail: "v1.2.3",
        action: "Last deploy of checkout",
        onset: "2026-11-20T14:01:00.000Z",
        confidence: "high",
      },
      symptoms: [
        { kind: "rise", action: "p99 latency", onset: "2026-11-20T14:05:00.000Z" },
        { kind: "rise", action: "error ratio", onset: "2026-11-20T14:05:00.000Z" },
      ],
      background: [],
      ruledOut: [],
      normal: [{ action: "request rate", found: "within-usual-range" }],
      unchecked: [],
    });
    expect(result.actionableMitigations).toEqual([
      { toolName: "rollback", url: "https://deploy.example.com/rollback/checkout" },
      { toolName: "pager", customName: "Page the owners of checkout" },
      { toolName: "grafana", url: "https://grafana.example/d/x?var-service=checkout" },
    ]);
  });

  it("gives the data of each metric action's chart, by its index in actionResults, from the answers it already had", async () => {
    api.route = (_request, response) => sendJson(response, 200, { version: "v1.2.3", deployedAt: "2026-11-20T14:01:00Z" });
    let runs = 0;
    const counted = (request: AnyActionRequest) => {
      runs += 1;
      return runAction(request);
    };
    const { result, charts } = await engineWith(catalog, { runAction: counted }).investigate(job("Checkout latency"));

    // p99 latency, error ratio, request rate: drawn; the deploy (an http answer): not.
    expect([...charts.keys()]).toEqual([0, 1, 2]);
    const latency = charts.get(0);
    expect(latency).toMatchObject({ title: "p99 latency", kind: "metric", unit: "s", abnormal: true, onset: Date.parse("2026-11-20T14:05:00Z") });
    expect(latency?.series).toHaveLength(1);
    expect(latency?.series[0]?.points.length).toBeGreaterThan(100);
    expect(charts.get(2)).toMatchObject({ title: "request rate", abnormal: false });
    expect(result.verdict?.cause?.action).toBe("Last deploy of checkout");
    // Nothing was asked again for the charts: one run per action.
    expect(runs).toBe(4);
  });

  it("keeps what its actions observed for an organization that asks, which replays offline to the same verdict", async () => {
    api.route = (_request, response) => sendJson(response, 200, { version: "v1.2.3", deployedAt: "2026-11-20T14:01:00Z" });
    const acme = catalog.organizations.get("acme");
    if (acme === undefined) throw new Error("no acme");
    const keeping: Catalog = { organizations: new Map([["acme", { ...acme, evidence: { keep: true, retentionDays: 3, maxBytes: 2 * 1024 * 1024 } }]]) };
    const kept: KeptEvidence[] = [];
    const keepEvidence = async (evidence: KeptEvidence) => {
      kept.push(evidence);
    };

    await resultOf(engineWith(catalog, { keepEvidence }), job("Checkout latency"), undefined, "exec-1");
    expect(kept).toEqual([]);
    const result = await resultOf(engineWith(keeping, { keepEvidence }), { ...job("Checkout latency"), teams: ["payments"] }, undefined, "exec-2");

    expect(kept.map(({ orgId, retentionDays, bundle }) => ({ orgId, retentionDays, executionId: bundle.executionId }))).toEqual([
      { orgId: "acme", retentionDays: 3, executionId: "exec-2" },
    ]);
    // As stored and read back: JSON, parsed by the contract.
    const bundle = EvidenceBundle.parse(JSON.parse(JSON.stringify(kept[0]?.bundle)));
    expect(bundle.issue).toEqual({ bookName: "Checkout latency", time: "2026-11-20T14:08:00Z", attributes: { service: "checkout" } });
    // Who may read it: the teams its execution ran for.
    expect(bundle.teams).toEqual(["payments"]);
    expect(bundle.actions.map(({ gadget, title, connector, observation }) => [gadget, title, connector, observation.kind])).toEqual([
      ["Latency of checkout", "p99 latency", "prometheus", "prometheus"],
      ["Errors and traffic", "error ratio", "prometheus", "prometheus"],
      ["Errors and traffic", "request rate", "prometheus", "prometheus"],
      ["Changes", "Last deploy of checkout", "http", "json"],
    ]);
    expect(bundle.actions[3]?.query).toEqual({
      method: "GET",
      path: "/deploys/checkout",
      answerField: "version",
      change: { kind: "deploy", timeField: "deployedAt", subject: "checkout" },
    });
    // What the sources answered and the filled queries; never where the sources are.
    const text = JSON.stringify(bundle);
    expect(text).not.toContain(prometheus.url);
    expect(text).not.toContain(api.url);

    const replay = replayBundle(bundle);
    expect(replay.verdict).toEqual(result.verdict);
    expect(replay.verdict.conclusion).toBe("cause");
    expect(replay.actionableMitigations).toEqual(result.actionableMitigations);
    expect(replay.unreadable).toEqual([]);
  });

  it("tells its audit record every query it sent, as sent, and the hash of the bundle it kept", async () => {
    api.route = (_request, response) => sendJson(response, 200, { version: "v1.2.3", deployedAt: "2026-11-20T14:01:00Z" });
    const acme = catalog.organizations.get("acme");
    if (acme === undefined) throw new Error("no acme");
    const keeping: Catalog = { organizations: new Map([["acme", { ...acme, evidence: { keep: true, retentionDays: 3, maxBytes: 2 * 1024 * 1024 } }]]) };
    const kept: KeptEvidence[] = [];

    const investigation = await engineWith(keeping, { keepEvidence: async (evidence) => void kept.push(evidence) }).investigate(
      job("Checkout latency"),
      undefined,
      "exec-audit",
    );

    const queries = investigation.audit?.queries ?? [];
    expect(queries.map(({ action, gadget, dataSource, connector, observation }) => ({ action, gadget, dataSource, connector, observation }))).toEqual(
      expect.arrayContaining([
        { action: "p99 latency", gadget: "Latency of checkout", dataSource: "metrics", connector: "prometheus", observation: "prometheus" },
        { action: "Last deploy of checkout", gadget: "Changes", dataSource: "deploys", connector: "http", observation: "json" },
      ]),
    );
    const deploy = queries.find((query) => query.action === "Last deploy of checkout");
    expect(deploy?.query).toEqual(kept[0]?.bundle.actions[3]?.query);
    expect(deploy?.window.start).toBe(kept[0]?.bundle.actions[3]?.window.start);
    const bundle = kept[0]?.bundle;
    expect(investigation.audit?.evidenceSha256).toBe(createHash("sha256").update(canonicalJson(bundle)).digest("hex"));

    const notKept = await engineWith(catalog).investigate(job("Checkout latency"), undefined, "exec-audit-2");
    expect(notKept.audit?.queries.length).toBe(queries.length);
    expect(notKept.audit?.evidenceSha256).toBeUndefined();
  });

  it("keeps the mitigations as the execution rendered them, so that a replay offers exactly the ones it offered", async () => {
    api.route = (_request, response) => sendJson(response, 200, { version: "v1.2.3", deployedAt: "2026-11-20T14:01:00Z" });
    const acme = catalog.organizations.get("acme");
    if (acme === undefined) throw new Error("no acme");
    const keeping: Catalog = { organizations: new Map([["acme", { ...acme, evidence: { keep: true, retentionDays: 3, maxBytes: 2 * 1024 * 1024 } }]]) };
    const kept: KeptEvidence[] = [];
    const engine = engineWith(keeping, { keepEvidence: async (evidence) => void kept.push(evidence) });
    const result = await resultOf(engine, job("Checkout latency, every mitigation"), undefined, "exec-mitigations");
    const silenceForm = "https://alertmanager.internal.example/#/silences/new?filter=%7Bservice%3D%22checkout%22%7D";
    const silence = {
      matchers: [{ name: "service", value: "checkout", isRegex: false, isEqual: true }],
      startsAt: "2026-11-20T14:08:00.000Z",
      endsAt: "2026-11-20T16:08:00.000Z",
      createdBy: "playbook-execution-service",
      comment: "Silence checkout for 2h",
    };
    expect(result.actionableMitigations).toEqual([
      { toolName: "rollback", url: "https://deploy.example.com/rollback/checkout" },
      { toolName: "alertmanager", customName: "Silence checkout for 2h", url: silenceForm, action: silence },
    ]);
    const bundle = EvidenceBundle.parse(JSON.parse(JSON.stringify(kept[0]?.bundle)));
    // The silence form's link holds the Alertmanager's address: the bundle names its data source instead.
    expect(JSON.stringify(bundle)).not.toContain("alertmanager.internal.example");
    expect(
      bundle.mitigations.map(({ mitigation, offered, silenceForm: form }) => ({ name: mitigation.customName ?? mitigation.toolName, offered, form })),
    ).toEqual([
      { name: "rollback", offered: true, form: undefined },
      { name: "Page the owners of checkout", offered: false, form: undefined },
      { name: "Silence checkout for 2h", offered: true, form: "alerts" },
    ]);
    const replay = replayBundle(bundle);
    expect(replay.verdict).toEqual(result.verdict);
    expect(replay.actionableMitigations).toEqual([
      { toolName: "rollback", url: "https://deploy.example.com/rollback/checkout" },
      { toolName: "alertmanager", customName: "Silence checkout for 2h", action: silence },
    ]);
  });

  it("names what was abnormal first, and when it began, when no change preceded it", async () => {
    api.route = (_request, response) => sendJson(response, 200, { version: "v1.2.3", deployedAt: "2026-11-20T14:30:00Z" });
    const result = await resultOf(engineWith(catalog), job("Checkout latency"));
    expect(result.verdict?.conclusion).toBe("no-cause");
    expect(result.verdict?.cause).toBeUndefined();
    expect(result.verdict?.symptoms).toEqual([
      { kind: "rise", action: "p99 latency", onset: "2026-11-20T14:05:00.000Z" },
      { kind: "rise", action: "error ratio", onset: "2026-11-20T14:05:00.000Z" },
    ]);
    expect(result.verdict?.normal).toEqual([{ action: "request rate", found: "within-usual-range" }]);
    expect(result.verdict?.ruledOut.map(({ kind, subject, why, leadMs }) => ({ kind, subject, why, leadMs }))).toEqual([
      { kind: "deploy", subject: "checkout", why: "after-first-symptom", leadMs: -25 * 60_000 },
    ]);
    // The deploy is not the cause: no roll back.
    expect(result.actionableMitigations?.map((mitigation) => mitigation.toolName)).toEqual(["pager", "grafana"]);
  });

  it("gives the identical result for the same data", async () => {
    api.route = (_request, response) => sendJson(response, 200, { version: "v1.2.3", deployedAt: "2026-11-20T14:01:00Z" });
    const engine = engineWith(catalog);
    const first = await resultOf(engine, job("Checkout latency"));
    const second = await resultOf(engine, job("Checkout latency"));
    // All but the wall time the budget says it took: the same queries, the same bytes.
    expect(withoutWallTime(second)).toEqual(withoutWallTime(first));
    expect(second.budget?.spent.queries).toBe(4);
  });

  it("reports a quiet service as within its usual range, a deploy before it as a change only", async () => {
    api.route = (_request, response) => sendJson(response, 200, { version: "v9", deployedAt: "2026-11-20T14:01:00Z" });
    const result = await resultOf(engineWith(catalog), job("Checkout latency", { service: "search" }));
    expect(result.verdict).toMatchObject({
      conclusion: "no-cause",
      symptoms: [],
      ruledOut: [{ kind: "deploy", subject: "search", detail: "v9", why: "no-symptom" }],
    });
    expect(result.verdict?.normal).toEqual([
      { action: "p99 latency", found: "within-usual-range" },
      { action: "error ratio", found: "within-usual-range" },
      { action: "request rate", found: "within-usual-range" },
    ]);
    // Healthy, though a deploy came before: nothing to roll back, nobody to page.
    expect(result.actionableMitigations).toEqual([{ toolName: "grafana", url: "https://grafana.example/d/x?var-service=search" }]);
  });

  it("lets a configured language model rewrite the bottom line, with its usage in the result, and keeps the rest as it was", async () => {
    api.route = (_request, response) => sendJson(response, 200, { version: "v1.2.3", deployedAt: "2026-11-20T14:01:00Z" });
    const summary = "Deploy v1.2.3 [Last deploy of checkout] preceded the p99 rise [p99 latency].";
    const model = await startTestHttpServer((_request, response) =>
      sendJson(response, 200, {
        choices: [{ message: { role: "assistant", content: JSON.stringify({ summary, citations: ["Last deploy of checkout", "p99 latency"] }) } }],
        usage: { prompt_tokens: 900, completion_tokens: 40 },
      }),
    );
    try {
      const plain = await resultOf(engineWith(catalog), job("Checkout latency"));
      const result = await resultOf(engineWith(catalog, { languageModel: { baseUrl: model.url, model: "small", timeoutMs: 5_000 } }), job("Checkout latency"));
      expect(result.highlights).toBe(summary);
      expect(result.analysis).toMatchObject({ by: "language-model", model: "small", promptTokens: 900, completionTokens: 40 });
      // The model rewords; the verdict stays the rules' own.
      expect(result.verdict?.cause).toMatchObject({ kind: "deploy", action: "Last deploy of checkout" });
      const { highlights: _model, analysis: _analysis, budget, ...rest } = result;
      const { highlights: _deterministic, budget: plainBudget, ...plainRest } = plain;
      expect(rest).toEqual(plainRest);
      // The model's tokens are spent from the budget, as its usage says; nothing else differs.
      expect(budget?.spent.modelTokens).toBe(940);
      expect({ ...budget?.spent, modelTokens: 0, wallTimeMs: 0 }).toEqual({ ...plainBudget?.spent, wallTimeMs: 0 });
      expect(plain.analysis).toBeUndefined();
    } finally {
      await model.close();
    }
  });

  it("leaves the model unasked once the organization's budget of model tokens cannot hold its prompt: the rules' text, the verdict whole", async () => {
    api.route = (_request, response) => sendJson(response, 200, { version: "v1.2.3", deployedAt: "2026-11-20T14:01:00Z" });
    const model = await startTestHttpServer((_request, response) => sendJson(response, 500, {}));
    const acme = catalog.organizations.get("acme");
    if (acme === undefined) throw new Error("acme is configured above");
    const budgeted: Catalog = { organizations: new Map([["acme", { ...acme, budget: { modelTokens: 100 } }]]) };
    const metrics = createWorkerMetrics({ jobNames: [] });
    try {
      const plain = await resultOf(engineWith(catalog), job("Checkout latency"));
      const engine = engineWith(budgeted, {
        languageModel: { baseUrl: model.url, model: "small", timeoutMs: 5_000 },
        onBudgetSettled: (orgId, budget) => metrics.budgetSettled(orgId, budget),
      });
      const result = await resultOf(engine, job("Checkout latency"));
      expect(model.requests).toHaveLength(0);
      expect(result.analysis).toEqual({ by: "deterministic", model: "small", fallback: "budget exhausted: model-tokens" });
      expect(result.highlights).toBe(plain.highlights);
      // Every action ran: the verdict is judged from all of its evidence, not partial.
      expect(result.verdict).toEqual(plain.verdict);
      expect(result.verdict?.partial).toBeUndefined();
      expect(result.budget).toMatchObject({ exhausted: "model-tokens", spent: { queries: 4, modelTokens: 0 }, limit: { modelTokens: 100 } });
      const exhausted = (await metrics.registry.getSingleMetric("pes_budget_exhausted_total")?.get())?.values ?? [];
      expect(exhausted.map(({ labels, value }) => ({ labels, value }))).toEqual([{ labels: { org: "acme", kind: "model-tokens" }, value: 1 }]);
    } finally {
      await model.close();
    }
  });

  it("turns a slow action into a timed-out finding while the others complete", async () => {
    api.route = () => {
      // held: the action's deadline must end it
    };
    const result = await resultOf(engineWith(catalog, { actionTimeoutMs: 300 }), job("Checkout latency"));
    // It keeps its link: where to look for what it could not fetch.
    expect(result.actionResults?.[3]).toMatchObject({ title: "Last deploy of checkout", mostImportantLink: `${api.url}/deploys/checkout` });
    expect(result.verdict?.unchecked).toEqual([{ action: "Last deploy of checkout", reason: "failed", error: "timed out after 300 ms" }]);
    expect(result.verdict?.symptoms.map(({ action }) => action)).toEqual(["p99 latency", "error ratio"]);
  });
});

describe("engine with misbehaving actions", () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startApi();
  });
  afterEach(() => {
    api.route = (_request, response) => sendJson(response, 200, { ok: true });
    delete api.onArrival;
  });
  afterAll(async () => {
    await api?.close();
  });

  const httpAction = (title: string, path: string, dataSource = "api") => ({ title, dataSource, http: { path, answerField: "answer" } });

  /** Playbook "Book" with these actions (and `fields`), over data source "api" (and `extra`). */
  function catalogFor(actions: unknown[], extra: Record<string, DataSource> = {}, fields: object = {}): Promise<Catalog> {
    return loadCatalog({ api: { type: "http", url: api.url }, ...extra }, [{ name: "Book", gadgets: [{ title: "Checks", actions }], ...fields }]);
  }

  it("keeps a failing action, a throwing one and a mismatched data source as findings", async () => {
    api.route = (request, response) =>
      request.url === "/broken" ? sendJson(response, 500, { answer: "no" }) : sendJson(response, 200, { answer: `ok ${request.url ?? ""}` });
    // Configuration drift, which loadConfig refuses: the playbook was checked while "api" was a Prometheus
    // data source and "nowhere" existed; since then "api" became an HTTP API and "nowhere" went away.
    const checked = await catalogFor(
      [
        httpAction("good", "/good", "web"),
        httpAction("broken", "/broken", "web"),
        httpAction("throws", "/throws", "web"),
        { title: "wrong type", dataSource: "api", prometheus: { query: "up" } },
        { title: "missing source", dataSource: "nowhere", prometheus: { query: "up" } },
      ],
      { web: { type: "http", url: api.url }, api: { type: "prometheus", url: api.url }, nowhere: { type: "prometheus", url: api.url } },
    );
    const current = await loadCatalog({ web: { type: "http", url: api.url }, api: { type: "http", url: api.url } }, []);
    const catalog = withDataSourcesOf(checked, current);
    const throwing = (request: AnyActionRequest): Promise<Observed> =>
      request.title === "throws" ? Promise.reject(new Error("connector bug")) : runAction(request);
    const result = await resultOf(engineWith(catalog, { runAction: throwing }), job("Book"));
    expect(result.actionResults?.map(({ title, mostImportantLink }) => ({ title, mostImportantLink }))).toEqual([
      { title: "good", mostImportantLink: `${api.url}/good` },
      { title: "broken", mostImportantLink: `${api.url}/broken` },
      { title: "throws" },
      { title: "wrong type" },
      { title: "missing source" },
    ]);
    expect(result.actionResults?.[0]?.shortAnswer).toBe("good: ok /good");
    expect(result.verdict?.unchecked).toEqual([
      { action: "broken", reason: "failed", error: "the data source answered HTTP 500 Internal Server Error" },
      { action: "throws", reason: "failed", error: "failed unexpectedly (details in the worker log)" },
      { action: "wrong type", reason: "failed", error: 'data source "api" is not a Prometheus data source' },
      { action: "missing source", reason: "failed", error: 'the organization has no data source "nowhere"' },
    ]);
  });

  it("answers once per action when an action finds several things, and says what it did not find", async () => {
    const catalog = await catalogFor([httpAction("Related alerts", "/alerts"), httpAction("Warnings", "/events")]);
    const at = new Date("2026-11-20T14:03:00Z");
    const endsAt = "2026-11-20T15:00:00Z";
    const several = async (request: AnyActionRequest): Promise<Observed> =>
      observed(
        request.title === "Related alerts"
          ? {
              kind: "alertmanager",
              alerts: [
                { labels: { alertname: "HighErrorRate", service: "checkout" }, startsAt: at.toISOString(), endsAt },
                { labels: { alertname: "HighLatency" }, startsAt: at.toISOString(), endsAt },
              ],
            }
          : { kind: "kubernetes-events", items: [] },
      );
    const result = await resultOf(engineWith(catalog, { runAction: several }), job("Book"));
    expect(result.actionResults?.map((item) => item.title)).toEqual(["Related alerts", "Warnings"]);
    // The alert for what the issue is about is the page: context, apart from the symptoms.
    expect(result.verdict?.paged).toEqual([
      { kind: "alert", subject: "service=checkout", detail: "HighErrorRate", action: "Related alerts", onset: at.toISOString() },
    ]);
    expect([...(result.verdict?.symptoms ?? []), ...(result.verdict?.background ?? [])].filter(({ kind }) => kind === "alert")).toEqual([
      { kind: "alert", detail: "HighLatency", action: "Related alerts", onset: at.toISOString() },
    ]);
    expect(result.verdict?.normal).toEqual([{ action: "Warnings", found: "none" }]);
  });

  it("reports each action's outcome and duration by organization, connector and data source name", async () => {
    api.route = (request, response) => (request.url === "/broken" ? sendJson(response, 500, { answer: "no" }) : sendJson(response, 200, { answer: "yes" }));
    const catalog = await catalogFor(
      [httpAction("good", "/good/{{service}}"), httpAction("broken", "/broken"), httpAction("stuck", "/stuck"), httpAction("Pods of {{pod}}", "/pods/{{pod}}")],
      {},
      { optionalAttributes: ["service", "pod"] },
    );
    const stuck = (request: AnyActionRequest): Promise<Observed> => (request.title === "stuck" ? new Promise<Observed>(() => undefined) : runAction(request));
    const reports: ActionReport[] = [];

    const engine = engineWith(catalog, { runAction: stuck, actionTimeoutMs: 200, onActionFinished: (report) => reports.push(report) });
    await resultOf(engine, job("Book", { service: "attribute-value-7f3a" }));

    const byOutcome = (outcome: ActionReport["outcome"]) => reports.filter((report) => report.outcome === outcome);
    expect(reports).toHaveLength(4);
    expect(byOutcome("ok")).toEqual([{ orgId: "acme", connector: "http", dataSource: "api", outcome: "ok", seconds: expect.any(Number) }]);
    expect(byOutcome("timeout")).toEqual([{ orgId: "acme", connector: "http", dataSource: "api", outcome: "timeout", seconds: expect.any(Number) }]);
    expect(byOutcome("skipped")).toEqual([{ orgId: "acme", connector: "http", dataSource: "api", outcome: "skipped" }]);
    expect(byOutcome("failed")).toEqual([{ orgId: "acme", connector: "http", dataSource: "api", outcome: "failed", seconds: expect.any(Number) }]);
    expect(JSON.stringify(reports)).not.toContain("attribute-value-7f3a");
  });

  it("reports actions cancelled by the execution's signal", async () => {
    const catalog = await catalogFor([httpAction("held", "/held"), httpAction("queued", "/queued")]);
    const controller = new AbortController();
    api.route = () => undefined;
    api.onArrival = () => controller.abort();
    const reports: ActionReport[] = [];

    await resultOf(engineWith(catalog, { maxConcurrentActions: 1, onActionFinished: (report) => reports.push(report) }), job("Book"), controller.signal);

    expect(reports.map(({ outcome, seconds }) => [outcome, seconds === undefined ? "never ran" : "ran"])).toEqual([
      ["cancelled", "ran"],
      ["cancelled", "never ran"],
    ]);
  });

  it("ends an action that ignores its signal at the deadline", async () => {
    const catalog = await catalogFor([httpAction("stuck", "/stuck"), httpAction("fine", "/fine")]);
    const ignoresSignal = (request: AnyActionRequest): Promise<Observed> =>
      request.title === "stuck" ? new Promise<Observed>(() => undefined) : Promise.resolve(observed({ kind: "text", text: "yes" }));
    const result = await resultOf(engineWith(catalog, { runAction: ignoresSignal, actionTimeoutMs: 200 }), job("Book"));
    expect(result.verdict?.unchecked).toEqual([{ action: "stuck", reason: "failed", error: "timed out after 200 ms" }]);
    expect(result.actionResults?.[1]?.shortAnswer).toBe("fine: yes");
  });

  it("marks actions cancelled when the execution's signal aborts", async () => {
    const catalog = await catalogFor([httpAction("held", "/held")]);
    const controller = new AbortController();
    api.route = () => undefined;
    api.onArrival = () => controller.abort();
    const result = await resultOf(engineWith(catalog), job("Book"), controller.signal);
    expect(result.verdict?.unchecked).toEqual([{ action: "held", reason: "failed", error: "cancelled before it finished" }]);
  });

  it("runs at most maxConcurrentActions at once, in playbook order", async () => {
    const titles = ["a", "b", "c", "d", "e", "f"];
    const catalog = await catalogFor(titles.map((title) => httpAction(title, `/${title}`)));
    const started: string[] = [];
    const finish = new Map<string, () => void>();
    let running = 0;
    let maxRunning = 0;
    const manual = (request: AnyActionRequest) =>
      new Promise<Observed>((resolve) => {
        started.push(request.title);
        running += 1;
        maxRunning = Math.max(maxRunning, running);
        finish.set(request.title, () => {
          running -= 1;
          resolve(observed({ kind: "text", text: "done" }));
        });
      });
    const execution = resultOf(engineWith(catalog, { runAction: manual, maxConcurrentActions: 2 }), job("Book"));
    await turn();
    expect(started).toEqual(["a", "b"]);
    finish.get("b")?.();
    await turn();
    expect(started).toEqual(["a", "b", "c"]);
    for (const title of ["a", "c", "d", "e", "f"]) {
      finish.get(title)?.();
      await turn();
    }
    const result = await execution;
    expect(maxRunning).toBe(2);
    expect(result.actionResults?.map((action) => action.shortAnswer)).toEqual(titles.map((title) => `${title}: done`));
  });

  it("keeps the bound on a real server counting requests in flight", async () => {
    const titles = ["a", "b", "c", "d", "e", "f", "g", "h"];
    const catalog = await catalogFor(titles.map((title) => httpAction(title, `/${title}`)));
    api.maxInFlight = 0;
    // Each request is held until three are in flight or none can follow; then the oldest is answered.
    let answered = 0;
    api.route = (_request, response) => api.held.push(response);
    api.onArrival = () => {
      while (api.held.length >= 3 || (api.held.length > 0 && answered + api.held.length === titles.length)) {
        const response = api.held.shift();
        answered += 1;
        if (response !== undefined) sendJson(response, 200, { answer: "ok" });
      }
    };
    const result = await resultOf(engineWith(catalog, { maxConcurrentActions: 3 }), job("Book"));
    expect(result.actionResults?.every((action) => action.shortAnswer?.endsWith(": ok"))).toBe(true);
    expect(api.maxInFlight).toBe(3);
  });

  it("keeps a data source's maxConcurrentQueries on a real server counting requests in flight", async () => {
    const titles = ["a", "b", "c", "d", "e", "f"];
    const catalog = await catalogFor(
      titles.map((title) => httpAction(title, `/${title}`, "limited")),
      {
        limited: { type: "http", url: api.url, maxConcurrentQueries: 2 },
      },
    );
    // Once two are held (or no other can come) the oldest is answered a moment later: time enough for a
    // request over the limit, if one were let through, to arrive and be counted.
    let answered = 0;
    let mostHeld = 0;
    let answering: NodeJS.Timeout | undefined;
    const answerLater = () => {
      if (answering !== undefined || !(api.held.length >= 2 || (api.held.length > 0 && answered + api.held.length === titles.length))) return;
      answering = setTimeout(() => {
        answering = undefined;
        answered += 1;
        const oldest = api.held.shift();
        if (oldest !== undefined) sendJson(oldest, 200, { answer: "ok" });
        answerLater();
      }, 20);
    };
    api.route = (_request, response) => {
      api.held.push(response);
      mostHeld = Math.max(mostHeld, api.held.length);
      answerLater();
    };
    api.onArrival = undefined;
    const result = await resultOf(engineWith(catalog, { maxConcurrentActions: 8 }), job("Book"));
    expect(result.actionResults?.map((action) => action.shortAnswer)).toEqual(titles.map((title) => `${title}: ok`));
    expect(mostHeld).toBe(2);
  });

  it("fails a query that waited its whole deadline for a slot, saying so", async () => {
    const catalog = await catalogFor([httpAction("query", "/query", "limited")], { limited: { type: "http", url: api.url, maxConcurrentQueries: 1 } });
    api.route = (_request, response) => api.held.push(response);
    api.onArrival = undefined;
    // Two engines (as two workers would) sharing the slots: the patient one holds the only slot.
    const querySlots = createLocalQuerySlots();
    const holding = resultOf(engineWith(catalog, { querySlots }), job("Book"));
    await until(() => api.held.length === 1);
    const reports: ActionReport[] = [];
    const impatient = await resultOf(
      engineWith(catalog, { querySlots, actionTimeoutMs: 300, onActionFinished: (report) => reports.push(report) }),
      job("Book"),
    );
    expect(impatient.verdict?.unchecked).toEqual([{ action: "query", reason: "failed", error: "waited 300 ms for the one query slot of data source limited" }]);
    expect(reports.map((report) => report.outcome)).toEqual(["timeout"]);
    expect(api.held).toHaveLength(1);
    const response = api.held.shift();
    if (response !== undefined) sendJson(response, 200, { answer: "ok" });
    expect((await holding).actionResults?.map((action) => action.shortAnswer)).toEqual(["query: ok"]);
  });

  it("fetches the same query over the same window once per execution, each action citing its own title", async () => {
    const catalog = await catalogFor(
      [
        httpAction("deploys", "/deploys/{{service}}"),
        httpAction("deploys again", "/deploys/{{service}}"),
        httpAction("other data source", "/deploys/{{service}}", "twin"),
        httpAction("other path", "/rollouts/{{service}}"),
      ],
      { twin: { type: "http", url: api.url } },
      { requiredAttributes: ["service"] },
    );
    api.route = (request, response) => sendJson(response, 200, { answer: `seen ${request.url}` });
    const before = api.requests.length;
    // One action at a time: the two identical ones never overlap, and still share one fetch.
    const result = await resultOf(engineWith(catalog, { maxConcurrentActions: 1 }), job("Book"));
    expect(result.actionResults?.map((action) => action.shortAnswer)).toEqual([
      "deploys: seen /deploys/checkout",
      "deploys again: seen /deploys/checkout",
      "other data source: seen /deploys/checkout",
      "other path: seen /rollouts/checkout",
    ]);
    expect(api.requests.slice(before).map((request) => request.url)).toEqual(["/deploys/checkout", "/deploys/checkout", "/rollouts/checkout"]);
  });

  it("runs a gadget that declares upstreams once per upstream of the issue's service, each finding citing its upstream", async () => {
    const catalog = await loadCatalog({ api: { type: "http", url: api.url } }, [
      {
        name: "Book",
        requiredAttributes: ["service"],
        gadgets: [
          { title: "Checks of {{service}}", actions: [httpAction("status of {{service}}", "/status/{{service}}")] },
          {
            title: "Upstream {{upstream}} of {{service}}",
            args: { upstream: "{{upstream}}" },
            upstreams: { by: "service", lists: { checkout: ["orders", "cart"] } },
            actions: [httpAction("status of {{upstream}}", "/status/{{upstream}}")],
          },
        ],
      },
    ]);
    api.route = (request, response) => sendJson(response, 200, { answer: `seen ${request.url}` });
    const result = await resultOf(engineWith(catalog), job("Book"));
    expect(result.actionResults?.map((action) => action.shortAnswer)).toEqual([
      "status of checkout: seen /status/checkout",
      "status of orders: seen /status/orders",
      "status of cart: seen /status/cart",
    ]);
    expect(result.gadgetsHighlights?.map(({ title, args }) => ({ title, args }))).toEqual([
      { title: "Checks of checkout" },
      { title: "Upstream orders of checkout", args: { upstream: "orders" } },
      { title: "Upstream cart of checkout", args: { upstream: "cart" } },
    ]);
    // A service with no list of upstreams runs none.
    const search = await resultOf(engineWith(catalog), job("Book", { service: "search" }));
    expect(search.actionResults?.map((action) => action.title)).toEqual(["status of search"]);

    // The bundle keeps who each instance is about, and the issue's upstreams: a replay judges as the worker did.
    const acme = catalog.organizations.get("acme");
    if (acme === undefined) throw new Error("no acme");
    const keeping: Catalog = { organizations: new Map([["acme", { ...acme, evidence: { keep: true, retentionDays: 1, maxBytes: 2 * 1024 * 1024 } }]]) };
    const kept: KeptEvidence[] = [];
    const keptResult = await resultOf(engineWith(keeping, { keepEvidence: async (evidence) => void kept.push(evidence) }), job("Book"), undefined, "exec-up");
    const bundle = EvidenceBundle.parse(JSON.parse(JSON.stringify(kept[0]?.bundle)));
    expect(bundle.issue.upstreams).toEqual(["orders", "cart"]);
    expect(bundle.actions.map(({ gadget, upstream }) => [gadget, upstream])).toEqual([
      ["Checks of checkout", undefined],
      ["Upstream orders of checkout", "orders"],
      ["Upstream cart of checkout", "cart"],
    ]);
    expect(replayBundle(bundle).verdict).toEqual(keptResult.verdict);
  });

  it("shares a fetch in flight between concurrent executions of one worker asking the same over the same window", async () => {
    const catalog = await catalogFor([httpAction("deploys", "/deploys/{{service}}")], {}, { requiredAttributes: ["service"] });
    api.route = (_request, response) => api.held.push(response);
    api.onArrival = undefined;
    const before = api.requests.length;
    const engine = engineWith(catalog);
    const first = resultOf(engine, job("Book"));
    await until(() => api.held.length === 1);
    const same = resultOf(engine, job("Book"));
    const otherService = resultOf(engine, job("Book", { service: "cart" }));
    // Both took the same steps from the same turn, `same` first: once the other service's request has
    // arrived, `same` has asked for its fetch. Had it not joined the one in flight, its own request would be
    // held here unanswered and the test would time out.
    await until(() => api.held.length === 2);
    for (const response of api.held.splice(0)) sendJson(response, 200, { answer: `seen ${response.req.url}` });
    const results = await Promise.all([first, same, otherService]);
    expect(results.map((result) => result.actionResults?.[0]?.shortAnswer)).toEqual([
      "deploys: seen /deploys/checkout",
      "deploys: seen /deploys/checkout",
      "deploys: seen /deploys/cart",
    ]);
    expect(api.requests.slice(before).map((request) => request.url)).toEqual(["/deploys/checkout", "/deploys/cart"]);
  });

  it("hands each data source the secrets resolved at start, not the process environment", async () => {
    const catalog = await catalogFor([httpAction("keyed", "/keyed")], {
      api: { type: "http", url: api.url, headers: { "x-api-key": { env: "PES_ENGINE_TEST_KEY" } } },
    });
    const seen: Array<string | string[] | undefined> = [];
    api.route = (request, response) => {
      seen.push(request.headers["x-api-key"]);
      sendJson(response, 200, { answer: "ok" });
    };
    const { secrets } = resolveCatalogSecrets(catalog, { env: { PES_ENGINE_TEST_KEY: "key-from-start" } });
    const result = await resultOf(engineWith(catalog, { secrets }), job("Book"));
    expect(result.actionResults?.[0]?.shortAnswer).toBe("keyed: ok");
    expect(seen).toEqual(["key-from-start"]);

    const without = await resultOf(engineWith(catalog), job("Book"));
    expect(without.verdict?.unchecked).toEqual([
      { action: "keyed", reason: "failed", error: "cannot build the request headers: environment variable PES_ENGINE_TEST_KEY is not set" },
    ]);
    expect(seen).toHaveLength(1);
  });

  it("refuses to build with a TLS setting it cannot use, naming the organization and the data source", async () => {
    const dir = await mkdtemp(join(tmpdir(), "pes-engine-tls-"));
    try {
      await writeFile(join(dir, "ca.pem"), "-----BEGIN CERTIFICATE-----\nnot a certificate\n-----END CERTIFICATE-----\n");
      const catalog = await catalogFor([httpAction("a", "/a")], {
        api: { type: "http", url: api.url, tls: { ca: { file: join(dir, "ca.pem") }, insecureSkipVerify: false } },
      });
      const { secrets, missing } = resolveCatalogSecrets(catalog, { env: {} });
      expect(missing).toEqual([]);
      expect(() => engineWith(catalog, { secrets })).toThrow(/^organization acme, data source api: unusable tls settings: /);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("answers an unknown playbook or organization with an error", async () => {
    const engine = engineWith(await catalogFor([httpAction("a", "/a")]));
    await expect(resultOf(engine, job("Nope"))).resolves.toEqual({ error: 'Unknown playbook "Nope" for this organization' });
    await expect(resultOf(engine, { ...job("Book"), orgId: "other" })).resolves.toEqual({ error: 'Unknown playbook "Book" for this organization' });
  });

  it("skips an action whose attributes are missing and says so", async () => {
    const catalog = await catalogFor([httpAction("Pods of {{pod}}", "/pods/{{pod}}"), httpAction("fine", "/fine")], {}, { optionalAttributes: ["pod"] });
    api.route = (_request, response) => sendJson(response, 200, { answer: "yes" });
    const result = await resultOf(engineWith(catalog), job("Book", {}));
    expect(result.actionResults?.map(({ title, mostImportantLink }) => ({ title, mostImportantLink }))).toEqual([
      { title: "Pods of {{pod}}" },
      { title: "fine", mostImportantLink: `${api.url}/fine` },
    ]);
    expect(result.verdict).toMatchObject({ conclusion: "no-cause", symptoms: [], normal: [] });
    expect(result.verdict?.unchecked).toEqual([{ action: "Pods of {{pod}}", reason: "not-run", missing: ["pod"] }]);
  });
});

describe("engine keeping the evidence of a large investigation", () => {
  let prometheus: LocalPrometheus;
  let api: TestApi;
  let catalog: Catalog;
  const JUMP = Date.parse("2026-11-20T14:05:00Z") / 1000;

  beforeAll(async () => {
    // 150 pods' latency every 15 s for three hours; pod 7's jumps 4× at 14:05, four minutes after a deploy.
    const series: SyntheticSeries[] = Array.from({ length: 150 }, (_, pod) => {
      const samples: Array<[number, number]> = [];
      for (let t = JUMP - 3 * 3600; t <= JUMP + 30 * 60; t += 15) samples.push([t, (0.4 + 0.02 * ((t / 15 + pod) % 3)) * (pod === 7 && t >= JUMP ? 4 : 1)]);
      return { name: "demo_pod_latency_seconds", labels: { pod: `checkout-${pod}` }, samples };
    });
    prometheus = await startPrometheus({ openMetrics: toOpenMetrics(series) });
    api = await startApi();
    api.route = (_request, response) => sendJson(response, 200, { version: "v1.2.3", deployedAt: "2026-11-20T14:01:00Z" });
    catalog = await loadCatalog({ metrics: { type: "prometheus", url: prometheus.url }, deploys: { type: "http", url: api.url } }, [
      {
        name: "Checkout pods",
        requiredAttributes: ["service"],
        gadgets: [
          {
            title: "Pods of {{service}}",
            actions: [{ title: "p99 latency by pod", dataSource: "metrics", prometheus: { query: "demo_pod_latency_seconds", unit: "s" } }],
          },
          {
            title: "Changes",
            actions: [
              {
                title: "Last deploy of {{service}}",
                dataSource: "deploys",
                http: { path: "/deploys/{{service}}", answerField: "version", change: { kind: "deploy", timeField: "deployedAt", subject: "{{service}}" } },
              },
            ],
          },
        ],
        mitigations: [{ toolName: "rollback", url: "https://deploy.example.com/rollback/{{service}}", when: { likelyCause: "deploy" } }],
      },
    ]);
  });
  afterAll(async () => {
    await prometheus?.stop();
    await api?.close();
  });

  it("keeps its bundle within the organization's cap, cut where the verdict allows, and it replays to the same verdict", async () => {
    const acme = catalog.organizations.get("acme");
    if (acme === undefined) throw new Error("no acme");
    const maxBytes = 128 * 1024;
    const capped: Catalog = { organizations: new Map([["acme", { ...acme, evidence: { keep: true, retentionDays: 1, maxBytes } }]]) };
    const kept: KeptEvidence[] = [];
    const result = await resultOf(
      engineWith(capped, { keepEvidence: async (evidence) => void kept.push(evidence) }),
      job("Checkout pods"),
      undefined,
      "exec-large",
    );
    expect(result.verdict?.cause).toMatchObject({ kind: "deploy", action: "Last deploy of checkout" });
    expect(result.verdict?.symptoms).toContainEqual(expect.objectContaining({ action: "p99 latency by pod", subject: "pod=checkout-7" }));

    expect(kept.map(({ maxBytes: cap, retentionDays }) => ({ cap, retentionDays }))).toEqual([{ cap: maxBytes, retentionDays: 1 }]);
    const stored = JSON.stringify(kept[0]?.bundle);
    expect(Buffer.byteLength(stored)).toBeLessThanOrEqual(maxBytes);
    const bundle = EvidenceBundle.parse(JSON.parse(stored));
    expect(bundle.truncated?.maxBytes).toBe(maxBytes);
    expect(bundle.truncated?.bytes).toBeGreaterThan(5 * maxBytes);
    expect(bundle.actions[0]?.truncated).toEqual([expect.objectContaining({ cut: "thinned", path: "data.result", of: 150 })]);

    const replay = replayBundle(bundle);
    expect(replay.verdict).toEqual(result.verdict);
    expect(replay.actionableMitigations).toEqual(result.actionableMitigations);
    expect(replay.truncated).toEqual(["p99 latency by pod"]);
  });
});

describe("engine with a Prometheus action answering a service graph", () => {
  let prometheus: LocalPrometheus;
  let catalog: Catalog;
  const START = Date.parse("2026-11-20T11:00:00Z") / 1000;
  const SLOWED = Date.parse("2026-11-20T14:03:00Z") / 1000;
  /** Calls per second of each call, as Tempo's service-graph processor counts them. */
  const CALLS = ["frontend>recommendation", "frontend>catalog", "frontend>checkout", "recommendation>catalog", "checkout>catalog"];

  beforeAll(async () => {
    const samplesOf = (valueAt: (t: number) => number): Array<[number, number]> => {
      const samples: Array<[number, number]> = [];
      for (let t = START; t <= SLOWED + 30 * 60; t += 15) samples.push([t, valueAt(t)]);
      return samples;
    };
    // The catalog's latency rose most (0.5 ms to 1.24 s) but checkout, which calls it too, kept its pace:
    // the delay is recommendation's, whose caller slowed with it and whose callee slowed on the way.
    const latency = (service: string, before: number, after: number): SyntheticSeries => ({
      name: "demo_latency_p95_ms",
      labels: { service },
      samples: samplesOf((t) => (t >= SLOWED ? after : before)),
    });
    const calls = CALLS.map((call): SyntheticSeries => {
      const [client = "", server = ""] = call.split(">");
      return {
        name: "demo_service_graph_request_total",
        type: "counter",
        labels: { client, server, namespace: "boutique" },
        samples: samplesOf((t) => t - START),
      };
    });
    prometheus = await startPrometheus({
      openMetrics: toOpenMetrics([latency("frontend", 31, 9_600), latency("recommendation", 4.8, 9_600), latency("catalog", 0.5, 1_240), ...calls]),
    });
    const latencyOf = (service: string) => ({
      title: `p95 latency of ${service}`,
      dataSource: "metrics",
      prometheus: { query: `demo_latency_p95_ms{service="${service}"}`, unit: "ms" },
    });
    const playbook = (name: string, graph: boolean) => ({
      name,
      requiredAttributes: ["namespace"],
      gadgets: [
        { title: "Latencies", actions: ["frontend", "recommendation", "catalog"].map(latencyOf) },
        ...(graph
          ? [
              {
                title: "Who calls whom",
                actions: [
                  {
                    title: "Service graph",
                    dataSource: "metrics",
                    prometheus: {
                      query: "sum by (client, server) (rate(demo_service_graph_request_total{namespace={{namespace}}}[10m]))",
                      range: false,
                      serviceGraph: {},
                    },
                  },
                ],
              },
            ]
          : []),
      ],
    });
    catalog = await loadCatalog({ metrics: { type: "prometheus", url: prometheus.url } }, [
      playbook("Latencies", false),
      playbook("Latencies and graph", true),
    ]);
  });
  afterAll(async () => {
    await prometheus?.stop();
  });

  it("names where the slowdown begins by who calls whom, which the latencies alone leave ambiguous, and keeps the graph for a replay", async () => {
    const attributes = { namespace: "boutique" };
    const alone = await resultOf(engineWith(catalog), job("Latencies", attributes));
    expect(alone.verdict).toMatchObject({ conclusion: "ambiguous", cause: { kind: "latency", subject: "service=catalog" } });

    const acme = catalog.organizations.get("acme");
    if (acme === undefined) throw new Error("no acme");
    const keeping: Catalog = { organizations: new Map([["acme", { ...acme, evidence: { keep: true, retentionDays: 1, maxBytes: 2 * 1024 * 1024 } }]]) };
    const kept: KeptEvidence[] = [];
    const result = await resultOf(
      engineWith(keeping, { keepEvidence: async (evidence) => void kept.push(evidence) }),
      job("Latencies and graph", attributes),
      undefined,
      "exec-graph",
    );
    expect(result.verdict).toMatchObject({ conclusion: "cause", cause: { kind: "latency", subject: "service=recommendation", confidence: "medium" } });

    const bundle = EvidenceBundle.parse(JSON.parse(JSON.stringify(kept[0]?.bundle)));
    const graph = ServiceGraphObservation.parse(bundle.actions.find(({ title }) => title === "Service graph")?.observation);
    expect(graph.calls.map(({ caller, callee }) => `${caller}>${callee}`).sort()).toEqual([...CALLS].sort());
    expect(replayBundle(bundle).verdict).toEqual(result.verdict);
  });
});
