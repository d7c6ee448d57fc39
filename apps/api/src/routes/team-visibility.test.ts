// Teams inside one organization, against every route that runs, matches, lists or reads: two teams of
// umbrella (testing/config) cannot read each other's objects (404, as across organizations), its admin
// reads them all, and a team cannot run a playbook it is not allowed (the same 400 as a playbook that
// does not exist). On a real Redis with the real execution client and a job worker in this process.
import { EVIDENCE_BUNDLE_VERSION, type ChartData } from "@pes/contracts";
import {
  createBatchStarts,
  createChartStore,
  createEvidenceStore,
  createExecutionClient,
  createExecutionWorker,
  EXECUTE_JOB,
  START_BATCH_JOB,
  type ChartStore,
  type EvidenceStore,
  type ExecutionClient,
} from "@pes/executions";
import { handleJob, keySpace, type JobWorker } from "@pes/jobs";
import { startRedis, uniquePrefix, type RedisHandle } from "@pes/local-services";
import { createLogger } from "@pes/logger";
import { pagePath, signPath } from "@pes/signed-links";
import { Redis } from "ioredis";
import request from "supertest";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { rsaKey, signToken, startJwksServer, testApp, type JwksServer } from "../testing/fixtures.js";

const key = rsaKey("key-1");
const umbrella = (claims: Record<string, unknown>) => signToken({ key, claims: { org_id: "umbrella", client_id: "umbrella-ci", ...claims } });
const payments = umbrella({ teams: ["payments"] });
const search = umbrella({ teams: ["search"] });
const both = umbrella({ teams: ["payments", "search"] });
const noTeam = umbrella({});
const admin = umbrella({ scope: "pes:org-admin" });
const acme = signToken({ key });
const LINK_SECRET = "a-link-signing-secret-of-32-chars!!";
const logger = createLogger({ name: "api-test", level: "silent" });
const time = "2024-05-01T11:59:00Z";
const disk = { bookName: "disk-full", attributes: { host: "db-1" }, time };
const latency = { bookName: "payment-latency", attributes: { host: "db-1" }, time };
const searchErrors = { bookName: "search-errors", attributes: { host: "db-1" }, time };

const chart: ChartData = {
  title: "usage",
  kind: "metric",
  window: { start: 0, time: 60_000, end: 120_000 },
  series: [{ name: "usage", points: [[0, 1]] }],
  abnormal: false,
};

let jwks: JwksServer;
let redis: RedisHandle;
let client: ExecutionClient;
let worker: JobWorker;
let evidence: EvidenceStore;
let charts: ChartStore;
let storeConnection: Redis;

beforeAll(async () => {
  [jwks, redis] = await Promise.all([startJwksServer([key.jwk]), startRedis()]);
});

afterAll(async () => {
  await Promise.all([jwks.close(), redis.stop()]);
});

beforeEach(async () => {
  const prefix = uniquePrefix("api-teams");
  storeConnection = new Redis(redis.url);
  const keys = keySpace(prefix, redis.url);
  evidence = createEvidenceStore(() => storeConnection, keys);
  charts = createChartStore(() => storeConnection, keys);
  client = createExecutionClient({ redisUrl: redis.url, prefix, logger, coalescing: { bucketMs: 60_000, reuseMs: 60_000 } });
  const starts = createBatchStarts({ redisUrl: redis.url, prefix, logger });
  worker = createExecutionWorker({
    redisUrl: redis.url,
    prefix,
    logger,
    concurrency: 10,
    batchStarts: starts,
    handlers: [
      handleJob(START_BATCH_JOB, (job, { signal }) => starts.run(job, signal)),
      handleJob(EXECUTE_JOB, async (job, { jobId }) => {
        // As the worker's engine does: the bundle records the teams its job runs for; charts go beside the record.
        const window = { start: "2024-05-01T10:59:00.000Z", time: job.time, end: "2024-05-01T12:14:00.000Z" };
        await evidence.keep(
          job.orgId,
          {
            v: EVIDENCE_BUNDLE_VERSION,
            executionId: jobId,
            issue: { bookName: job.bookName, time: job.time, attributes: job.attributes },
            actions: [{ gadget: "Disk", title: "usage", connector: "prometheus", window, observation: { kind: "failed", reason: "no answer" } }],
            mitigations: [],
            ...(job.teams === undefined ? {} : { teams: job.teams }),
          },
          { retentionDays: 1, maxBytes: 64 * 1024 },
        );
        await charts.keep(job.orgId, jobId, new Map([[0, chart]]), 60_000);
        return { highlights: `${job.bookName} for ${JSON.stringify(job.teams)}` };
      }),
    ],
  });
  await Promise.all([client.start(), worker.start()]);
});

afterEach(async () => {
  await client.close();
  await worker.close(5_000);
  await storeConnection.quit();
});

function api() {
  const { app } = testApp({ jwksUrl: jwks.url, executionClient: client, evidence, charts, linkSigningSecret: LINK_SECRET });
  return {
    app,
    post: (path: string, token: string) => request(app).post(path).set("Authorization", `Bearer ${token}`),
    get: (path: string, token: string) => request(app).get(path).set("Authorization", `Bearer ${token}`),
  };
}

/** Runs a playbook synchronously for a caller: its execution id. */
async function run(token: string, body: object): Promise<string> {
  const answer = await api().post("/playbook/execution", token).send(body);
  expect(answer.status).toBe(200);
  return String(answer.headers["x-execution-id"]);
}

/** Every read of one execution: its status, its evidence, its first chart. */
const readsOf = (id: string) => [`/playbook/execution/${id}`, `/playbook/execution/${id}/evidence`, `/playbook/execution/${id}/charts/0`];

describe("reading another team's objects", () => {
  it("lets the team an execution ran for and the admin read it, its evidence and charts; any other team reads a 404", async () => {
    const { get } = api();
    const id = await run(payments, latency);
    for (const path of readsOf(id)) {
      expect((await get(path, payments)).status, path).toBe(200);
      expect((await get(path, both)).status, path).toBe(200);
      expect((await get(path, admin)).status, path).toBe(200);
      for (const token of [search, noTeam, acme]) {
        const refused = await get(path, token);
        expect(refused.status, path).toBe(404);
        // Exactly what an execution that does not exist gets: nothing tells it exists.
        const missing = await get(path.replace(id, "00000000-0000-4000-8000-000000000000"), token);
        expect(refused.body, path).toEqual(missing.body);
      }
    }
    const bundle = await get(`/playbook/execution/${id}/evidence`, admin);
    expect(bundle.body.teams).toEqual(["payments"]);
  });

  it("keeps an execution of a playbook open to all for the caller's teams; a caller of no team's for callers of no team", async () => {
    const { get } = api();
    const ofSearch = await run(search, disk);
    const ofNoTeam = await run(noTeam, disk);
    expect(ofSearch).not.toBe(ofNoTeam);
    expect((await get(`/playbook/execution/${ofSearch}`, search)).status).toBe(200);
    expect((await get(`/playbook/execution/${ofSearch}`, payments)).status).toBe(404);
    expect((await get(`/playbook/execution/${ofSearch}`, noTeam)).status).toBe(404);
    expect((await get(`/playbook/execution/${ofNoTeam}`, noTeam)).status).toBe(200);
    expect((await get(`/playbook/execution/${ofNoTeam}`, search)).status).toBe(404);
    expect((await get(`/playbook/execution/${ofNoTeam}`, admin)).status).toBe(200);
    expect((await get(`/playbook/execution/${ofSearch}/evidence`, admin)).body.teams).toEqual(["search"]);
    expect((await get(`/playbook/execution/${ofNoTeam}/evidence`, admin)).body.teams).toEqual([]);
  });

  it("never shares one execution, or an Idempotency-Key, between two teams", async () => {
    const { post } = api();
    const first = await post("/playbook/execution", payments).set("Idempotency-Key", "key-1").send(disk);
    const again = await post("/playbook/execution", payments).set("Idempotency-Key", "key-1").send(disk);
    const other = await post("/playbook/execution", search).set("Idempotency-Key", "key-1").send(disk);
    expect(first.status).toBe(200);
    expect(again.headers["x-execution-id"]).toBe(first.headers["x-execution-id"]);
    expect(other.status).toBe(200);
    expect(other.headers["x-execution-id"]).not.toBe(first.headers["x-execution-id"]);
    expect(other.body.highlights).toBe('disk-full for ["search"]');
    // Identical requests of two teams without a key: two executions too (coalescing is per team).
    const [a, b] = await Promise.all([run(payments, { ...disk, attributes: { host: "db-2" } }), run(search, { ...disk, attributes: { host: "db-2" } })]);
    expect(a).not.toBe(b);
  });

  it("lets a signed page link open whatever team's execution it names: a link is a capability", async () => {
    const { app } = api();
    const id = await run(payments, latency);
    const link = signPath(LINK_SECRET, { path: pagePath(id), orgId: "umbrella", executionId: id }, new Date(Date.now() + 60_000));
    const page = await request(app).get(link);
    expect(page.status).toBe(200);
  });
});

describe("running a playbook a team may not", () => {
  it("answers exactly as for a playbook that does not exist, by name or by title", async () => {
    const { post } = api();
    for (const [token, body] of [
      [search, latency],
      [payments, searchErrors],
      [noTeam, searchErrors],
    ] as const) {
      const refused = await post("/playbook/execution", token).send(body);
      const unknown = await post("/playbook/execution", token).send({ ...body, bookName: "no-such-playbook" });
      expect(refused.status).toBe(400);
      expect(refused.body.error.map((issue: { path: string[] }) => issue.path)).toEqual([["body", "bookName"]]);
      expect(refused.body).toEqual(JSON.parse(JSON.stringify(unknown.body).replaceAll("no-such-playbook", body.bookName)));
    }
    const byTitle = await post("/playbook/execution", payments).send({ title: "Search errors on web-1", time });
    const noMatch = await post("/playbook/execution", payments).send({ title: "Nothing matches web-1", time });
    expect(byTitle.status).toBe(400);
    expect(byTitle.body.error.map((issue: { path: string[] }) => issue.path)).toEqual(noMatch.body.error.map((issue: { path: string[] }) => issue.path));
  });

  it("lets a team run a playbook only when every data source it reads allows the team too; the admin runs any", async () => {
    const { post } = api();
    // payment-latency names search, but reads ledger, which only payments may read.
    expect((await post("/playbook/execution", search).send(latency)).status).toBe(400);
    expect((await post("/playbook/execution", payments).send(latency)).status).toBe(200);
    const byAdmin = await post("/playbook/execution", admin).send(searchErrors);
    expect(byAdmin.status).toBe(200);
    // An admin of none of its teams runs it for the teams it allows: never left to callers of no team.
    expect(byAdmin.body.highlights).toBe('search-errors for ["search"]');
    expect((await api().get(`/playbook/execution/${byAdmin.headers["x-execution-id"]}`, search)).status).toBe(200);
    expect((await api().get(`/playbook/execution/${byAdmin.headers["x-execution-id"]}`, noTeam)).status).toBe(404);
  });

  it("lists and matches only the playbooks the caller may run", async () => {
    const { get, post } = api();
    const names = async (token: string) => ((await get("/playbook", token)).body as { name: string }[]).map((playbook) => playbook.name);
    expect(await names(payments)).toEqual(["disk-full", "payment-latency"]);
    expect(await names(search)).toEqual(["disk-full", "search-errors"]);
    expect(await names(noTeam)).toEqual(["disk-full"]);
    expect(await names(admin)).toEqual(["disk-full", "payment-latency", "search-errors"]);

    const match = async (token: string, title: string) => (await post("/playbook/match", token).send({ title, time })).body;
    expect((await match(search, "Search errors on web-1")).bookName).toBe("search-errors");
    // Word for word what a title that matches no playbook gets (its own text aside).
    const hidden = JSON.stringify(await match(payments, "Search errors on web-1"));
    const nothing = JSON.stringify(await match(payments, "Nothing matches web-1"));
    expect(JSON.parse(hidden.replaceAll("Search errors on", "Nothing matches"))).toEqual(JSON.parse(nothing));
  });

  it("gives a batch item of a playbook the team may not run the error of an unknown playbook", async () => {
    const { post } = api();
    const answer = await post("/playbook/execution/batch", search).send({ inputList: [searchErrors, latency, { ...latency, bookName: "no-such-playbook" }] });
    expect(answer.status).toBe(200);
    expect(answer.body[0].highlights).toBe('search-errors for ["search"]');
    expect(answer.body[1]).toEqual(JSON.parse(JSON.stringify(answer.body[2]).replaceAll("no-such-playbook", "payment-latency")));
  });

  it("starts no investigation of an alert whose playbook the team may not run: it is unmatched, as an alert of no playbook", async () => {
    const { post, get } = api();
    const alert = (name: string) => ({
      version: "4",
      status: "firing",
      receiver: "pes",
      groupLabels: {},
      commonLabels: {},
      commonAnnotations: {},
      externalURL: "http://alertmanager.test",
      alerts: [{ status: "firing", labels: { alertname: name }, annotations: {}, startsAt: "2024-05-01T11:58:00Z", fingerprint: "f1" }],
    });
    const refused = await post("/webhooks/alertmanager", payments).send(alert("Search errors on web-1"));
    const nothing = await post("/webhooks/alertmanager", payments).send(alert("Nothing matches web-1"));
    expect(refused.status).toBe(202);
    expect(refused.body.executions).toEqual([]);
    expect(refused.body.unmatched.map((entry: { reason: string }) => entry.reason)).toEqual(
      nothing.body.unmatched.map((entry: { reason: string }) => entry.reason),
    );
    const started = await post("/webhooks/alertmanager", search).send(alert("Search errors on web-1"));
    expect(started.status).toBe(202);
    const [execution] = started.body.executions;
    expect(execution.bookName).toBe("search-errors");
    expect((await get(`/playbook/execution/${execution.executionId}`, search)).status).toBe(200);
    expect((await get(`/playbook/execution/${execution.executionId}`, payments)).status).toBe(404);
  });
});

describe("batches", () => {
  /** Reads a batch until its items completed: its status code for `token` then. */
  async function settled(path: string, token: string): Promise<void> {
    let read = await api().get(path, token);
    while (read.status === 200 && read.body.status !== "completed") read = await api().get(path, token);
    expect(read.status).toBe(200);
  }

  it("lets the team a batch ran for and the admin read it, its pages and its event stream; any other team reads a 404", async () => {
    const { post, get } = api();
    const accepted = await post("/playbook/execution/batch", payments)
      .set("Prefer", "respond-async")
      .send({ inputList: [latency, disk] });
    expect(accepted.status).toBe(202);
    const location = String(accepted.headers.location);
    await settled(location, payments);
    const page = await get(`${location}?offset=0&limit=2`, payments);
    expect(page.body.items.map((item: { result: { highlights: string } }) => item.result.highlights)).toEqual([
      'payment-latency for ["payments"]',
      'disk-full for ["payments"]',
    ]);
    expect((await get(location, admin)).status).toBe(200);
    for (const token of [search, noTeam, acme]) {
      const refused = await get(location, token);
      expect(refused.status).toBe(404);
      expect(refused.body).toEqual((await get("/playbook/execution/batch/00000000-0000-4000-8000-000000000000", token)).body);
      const stream = await get(location, token).set("Accept", "text/event-stream");
      expect(stream.status).toBe(404);
    }
    // Its items are executions of payments like any other.
    const itemId = page.body.items[0].executionId;
    expect((await get(`/playbook/execution/${itemId}`, search)).status).toBe(404);
    expect((await get(`/playbook/execution/${itemId}`, payments)).status).toBe(200);
  });

  it("refuses an async batch whose playbooks run for teams with none in common", async () => {
    const { post } = api();
    const refused = await post("/playbook/execution/batch", both)
      .set("Prefer", "respond-async")
      .send({ inputList: [latency, searchErrors] });
    expect(refused.status).toBe(400);
    expect(refused.body.error.map((issue: { path: string[] }) => issue.path)).toEqual([["body", "inputList"]]);
    const accepted = await post("/playbook/execution/batch", both)
      .set("Prefer", "respond-async")
      .send({ inputList: [latency, disk] });
    expect(accepted.status).toBe(202);
    await settled(String(accepted.headers.location), payments);
    // Run for payments alone (what both its items run for): search does not see it.
    expect((await api().get(String(accepted.headers.location), search)).status).toBe(404);
  });
});
