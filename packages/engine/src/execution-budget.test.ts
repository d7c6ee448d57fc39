import type { ServerResponse } from "node:http";
import type { Catalog } from "@pes/config";
import { catalogOf } from "@pes/config/testing";
import { replayBundle } from "@pes/analysis";
import { EvidenceBundle, type BudgetLimits, type ExecutionJob } from "@pes/contracts";
import { sendJson, startTestHttpServer, type SeenRequest, type TestHttpServer } from "@pes/local-services";
import { createLogger } from "@pes/logger";
import { createWorkerMetrics, type WorkerMetrics } from "@pes/metrics";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createEngine, type EngineDeps, type KeptEvidence } from "./engine.js";
import { budgetLimitsOf, createBudgetMeter } from "./execution-budget.js";

const logger = createLogger({ name: "budget-test", level: "silent" });

/** The data source's answer to every action: its bytes (padding included) are what the budget counts. */
const ANSWER = { answer: "ok", padding: "x".repeat(1_000) };
const ANSWER_BYTES = Buffer.byteLength(JSON.stringify(ANSWER));

const ACTIONS = ["first", "second", "third", "fourth", "fifth"];

/** Organization acme (its `budget`) and playbook Book of ACTIONS queries to its HTTP data source (its `budget`). */
async function catalogWith(url: string, organization: object | undefined, playbook: BudgetLimits | undefined): Promise<Catalog> {
  const dataSources = { api: { type: "http", url } };
  const actions = ACTIONS.map((name) => ({ title: name, dataSource: "api", http: { path: `/${name}`, answerField: "answer" } }));
  return catalogOf({
    organizations: [{ id: "acme", clientIds: ["client-1"], dataSources, ...(organization === undefined ? {} : { budget: organization }) }],
    playbooks: { acme: [{ name: "Book", gadgets: [{ title: "Checks", actions }], ...(playbook === undefined ? {} : { budget: playbook }) }] },
  });
}

const job: ExecutionJob = {
  orgId: "acme",
  requestId: "req-budget",
  v: 1,
  replyTo: "api-1",
  deadline: Date.now() + 600_000,
  bookName: "Book",
  time: "2026-11-20T14:08:00Z",
  attributes: {},
  liveRun: false,
};

/** A counter's values by their labels joined with `/`. */
async function counter(metrics: WorkerMetrics, name: string): Promise<Record<string, number>> {
  const values = (await metrics.registry.getSingleMetric(name)?.get())?.values ?? [];
  return Object.fromEntries(values.filter(({ value }) => value > 0).map(({ labels, value }) => [Object.values(labels).join("/"), value]));
}

/** Each action's path the data source was asked, in order. */
const asked = (requests: readonly SeenRequest[]) => requests.map(({ url }) => url.slice(1));

/** The unchecked actions a budget stopped, as the verdict lists them. */
function stoppedBy(budget: string, titles: readonly string[]) {
  return titles.map((action) => ({ action, reason: "failed", error: `budget exhausted: ${budget}`, budget }));
}

describe("an execution's budget", () => {
  let api: TestHttpServer;
  let route: (request: SeenRequest, response: ServerResponse) => void;
  let metrics: WorkerMetrics;

  beforeAll(async () => {
    api = await startTestHttpServer((request, response) => route(request, response));
  });
  afterEach(() => {
    api.requests.length = 0;
  });
  afterAll(async () => {
    await api?.close();
  });

  /** An engine wired as the worker wires it: actions and budgets into a fresh WorkerMetrics. */
  function engineFor(catalog: Catalog, overrides: Partial<EngineDeps> = {}) {
    metrics = createWorkerMetrics({ jobNames: [] });
    return createEngine({
      catalog,
      secrets: new Map(),
      logger,
      actionTimeoutMs: 60_000,
      maxConcurrentActions: 8,
      onActionFinished: (report) => metrics.actionFinished(report),
      onBudgetSettled: (orgId, budget) => metrics.budgetSettled(orgId, budget),
      ...overrides,
    });
  }

  it("spends nothing it is not asked to limit, and says what it spent", async () => {
    route = (_request, response) => sendJson(response, 200, ANSWER);
    const engine = engineFor(await catalogWith(api.url, undefined, undefined));
    const { result } = await engine.investigate(job);
    expect(result.budget).toMatchObject({ spent: { queries: 5, bytes: 5 * ANSWER_BYTES, modelTokens: 0 }, limit: {} });
    expect(result.budget?.exhausted).toBeUndefined();
    expect(result.verdict?.partial).toBeUndefined();
    expect(result.verdict?.unchecked).toEqual([]);
    expect(await counter(metrics, "pes_budget_spent_total")).toMatchObject({ "acme/queries": 5, "acme/bytes": 5 * ANSWER_BYTES });
    await engine.close();
  });

  it("starts no query past its query limit (the playbook's, smaller than its organization's), lets those in flight finish and lists the rest as unchecked", async () => {
    // The two that start are held until the third has been refused: they finish after the limit is reached.
    const held: ServerResponse[] = [];
    route = (_request, response) => {
      held.push(response);
      if (held.length === 2) for (const response of held) sendJson(response, 200, ANSWER);
    };
    const engine = engineFor(await catalogWith(api.url, { queries: 4 }, { queries: 2 }));
    const { result } = await engine.investigate(job);

    expect(asked(api.requests)).toEqual(["first", "second"]);
    expect(result.actionResults?.map(({ shortAnswer }) => shortAnswer)).toEqual([
      `first: ${ANSWER.answer}`,
      `second: ${ANSWER.answer}`,
      "third: budget exhausted: queries",
      "fourth: budget exhausted: queries",
      "fifth: budget exhausted: queries",
    ]);
    expect(result.verdict?.unchecked).toEqual(stoppedBy("queries", ["third", "fourth", "fifth"]));
    expect(result.verdict?.partial).toEqual({ budgets: ["queries"] });
    expect(result.budget).toMatchObject({ exhausted: "queries", spent: { queries: 2, bytes: 2 * ANSWER_BYTES, modelTokens: 0 }, limit: { queries: 2 } });
    expect(await counter(metrics, "pes_budget_spent_total")).toMatchObject({ "acme/queries": 2, "acme/bytes": 2 * ANSWER_BYTES });
    expect(await counter(metrics, "pes_budget_exhausted_total")).toEqual({ "acme/queries": 1 });
    expect(await counter(metrics, "pes_actions_total")).toEqual({ "acme/http/api/ok": 2, "acme/http/api/budget": 3 });
    await engine.close();
  });

  it("keeps a partial execution's bundle so that it replays to the same partial verdict", async () => {
    route = (_request, response) => sendJson(response, 200, ANSWER);
    const loaded = await catalogWith(api.url, { queries: 3 }, undefined);
    const acme = loaded.organizations.get("acme");
    if (acme === undefined) throw new Error("acme is configured above");
    const catalog: Catalog = { organizations: new Map([["acme", { ...acme, evidence: { keep: true, retentionDays: 1, maxBytes: 1024 * 1024 } }]]) };
    const kept: KeptEvidence[] = [];
    const engine = engineFor(catalog, { keepEvidence: async (evidence) => void kept.push(evidence) });
    const { result } = await engine.investigate(job, undefined, "exec-budget");
    expect(result.verdict?.partial).toEqual({ budgets: ["queries"] });
    const [bundle] = kept.map((evidence) => EvidenceBundle.parse(JSON.parse(JSON.stringify(evidence.bundle))));
    if (bundle === undefined) throw new Error("the bundle was kept");
    expect(replayBundle(bundle).verdict).toEqual(result.verdict);
    await engine.close();
  });

  it("starts no query once the bytes it read reach its byte limit", async () => {
    route = (_request, response) => sendJson(response, 200, ANSWER);
    // One at a time: each answer is counted before the next query would start.
    const engine = engineFor(await catalogWith(api.url, { bytes: ANSWER_BYTES + 1 }, undefined), { maxConcurrentActions: 1 });
    const { result } = await engine.investigate(job);

    expect(asked(api.requests)).toEqual(["first", "second"]);
    expect(result.verdict?.unchecked).toEqual(stoppedBy("bytes", ["third", "fourth", "fifth"]));
    expect(result.verdict?.partial).toEqual({ budgets: ["bytes"] });
    expect(result.budget).toMatchObject({ exhausted: "bytes", spent: { queries: 2, bytes: 2 * ANSWER_BYTES }, limit: { bytes: ANSWER_BYTES + 1 } });
    expect(await counter(metrics, "pes_budget_spent_total")).toMatchObject({ "acme/queries": 2, "acme/bytes": 2 * ANSWER_BYTES });
    expect(await counter(metrics, "pes_budget_exhausted_total")).toEqual({ "acme/bytes": 1 });
    await engine.close();
  });

  it("stops waiting at its wall-time limit: the query in flight is cut, those queued never start, what was answered stays", async () => {
    const WALL_TIME_MS = 1_000;
    // The first answers; the second is held past the limit, and the rest queue behind it (one at a time).
    route = (request, response) => {
      if (request.url === "/first") sendJson(response, 200, ANSWER);
    };
    const engine = engineFor(await catalogWith(api.url, { wallTimeMs: WALL_TIME_MS }, undefined), { maxConcurrentActions: 1 });
    const { result } = await engine.investigate(job);

    // The held query's request was given up, not left hanging.
    await api.waitForAbandoned(1);
    expect(asked(api.requests)).toEqual(["first", "second"]);
    expect(result.actionResults?.[0]?.shortAnswer).toBe(`first: ${ANSWER.answer}`);
    expect(result.verdict?.unchecked).toEqual(stoppedBy("wall-time", ["second", "third", "fourth", "fifth"]));
    expect(result.verdict?.partial).toEqual({ budgets: ["wall-time"] });
    expect(result.budget).toMatchObject({ exhausted: "wall-time", spent: { queries: 2, bytes: ANSWER_BYTES }, limit: { wallTimeMs: WALL_TIME_MS } });
    expect(result.budget?.spent.wallTimeMs).toBeGreaterThanOrEqual(WALL_TIME_MS);
    expect(await counter(metrics, "pes_budget_exhausted_total")).toEqual({ "acme/wall-time": 1 });
    expect((await counter(metrics, "pes_budget_spent_total"))["acme/wall-time"]).toBeGreaterThanOrEqual(WALL_TIME_MS / 1_000);
    await engine.close();
  });
});

describe("budgetLimitsOf", () => {
  it("takes the smaller of the organization's and the playbook's limit per kind, and leaves a kind neither sets unlimited", () => {
    expect(budgetLimitsOf({ queries: 10, bytes: 1_000 }, { queries: 4, wallTimeMs: 5_000 })).toEqual({ queries: 4, bytes: 1_000, wallTimeMs: 5_000 });
    expect(budgetLimitsOf(undefined, undefined)).toEqual({});
  });
});

describe("createBudgetMeter", () => {
  it("keeps the execution's own signal without a wall-time limit, and passes its cancellation on with one", () => {
    const outer = new AbortController();
    expect(createBudgetMeter({ queries: 1 }, outer.signal).signal).toBe(outer.signal);
    const meter = createBudgetMeter({ wallTimeMs: 60_000 }, outer.signal);
    outer.abort(new Error("shutting down"));
    expect(meter.signal?.reason).toBe(outer.signal.reason);
    meter.settle();
  });

  it("uncounts a query that asked nothing, so that it takes no room from the next", () => {
    const meter = createBudgetMeter({ queries: 1 }, undefined);
    expect(meter.startQuery()).toBeUndefined();
    meter.unstartQuery();
    expect(meter.startQuery()).toBeUndefined();
    expect(meter.startQuery()).toBe("queries");
    expect(meter.settle()).toMatchObject({ exhausted: "queries", spent: { queries: 1 } });
  });
});
