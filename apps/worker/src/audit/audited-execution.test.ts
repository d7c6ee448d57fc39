// The audit record an execution job appends as it ends, over a real Redis stream: once per execution,
// whatever the ending, from the job as queued and what the engine ran.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Catalog } from "@pes/config";
import { catalogOf } from "@pes/config/testing";
import { AuditRecord, RequestRefusal, type ExecutionJob, type MessageExecutionJob, type PlaybookExecutionResult } from "@pes/contracts";
import type { Engine } from "@pes/engine";
import { createAuditTrail, type AuditTrail } from "@pes/executions";
import { keySpace } from "@pes/jobs";
import { startRedis, startTestHttpServer, sendJson, uniquePrefix, type RedisHandle, type TestHttpServer } from "@pes/local-services";
import { createLogger } from "@pes/logger";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditDestinations } from "./audit-destinations.js";
import { auditedExecution, type AuditDeps } from "./audited-execution.js";
import { playbookVersion } from "./audit-record.js";
import { jsonLinesSink } from "./json-lines-sink.js";

let redisHandle: RedisHandle;
let connection: Redis;
let trail: AuditTrail;
let catalog: Catalog;
let slack: TestHttpServer;
let dir: string;
const logger = createLogger({ name: "audit-test", level: "silent" });

beforeAll(async () => {
  redisHandle = await startRedis();
  connection = new Redis(redisHandle.url);
  trail = createAuditTrail(() => connection, keySpace(uniquePrefix("audited"), redisHandle.url));
  slack = await startTestHttpServer((_request, response) => sendJson(response, 200, { ok: true }));
  dir = await mkdtemp(join(tmpdir(), "pes-audited-"));
  const organization = {
    id: "acme",
    clientIds: ["client-1"],
    dataSources: { metrics: { type: "prometheus", url: "http://127.0.0.1:9" } },
    slack: { botToken: { env: "UNUSED_SLACK_TOKEN" }, apiUrl: `${slack.url}/api/` },
  };
  const playbook = {
    name: "checkout-latency",
    monitorNames: ["High latency on {{service}}"],
    requiredAttributes: ["service"],
    gadgets: [{ title: "Latency", actions: [{ title: "p99", dataSource: "metrics", prometheus: { query: "up{service={{service}}}" } }] }],
  };
  catalog = await catalogOf({ organizations: [organization], playbooks: { acme: [playbook] } });
});
afterAll(async () => {
  await connection.quit();
  await redisHandle.stop();
  await slack.close();
  await rm(dir, { recursive: true, force: true });
});

const REQUESTED_BY = { subject: "alice", clientId: "client-1", teams: ["payments"], entry: { kind: "route", route: "POST /playbook/execution" } } as const;

function job(overrides: Partial<ExecutionJob> = {}): ExecutionJob {
  return {
    v: 1,
    replyTo: "api-1",
    deadline: Date.now() + 60_000,
    orgId: "acme",
    requestId: "req-1",
    bookName: "checkout-latency",
    time: "2026-11-20T14:08:00Z",
    attributes: { service: "checkout" },
    liveRun: false,
    requestedBy: { ...REQUESTED_BY, teams: [...REQUESTED_BY.teams] },
    ...overrides,
  };
}

const QUERY = {
  action: "p99",
  gadget: "Latency",
  dataSource: "metrics",
  connector: "prometheus",
  query: { query: 'up{service="checkout"}' },
  window: { start: "2026-11-20T13:08:00.000Z", end: "2026-11-20T14:23:00.000Z" },
  observation: "prometheus",
};

/** An engine that answers `result` with one query sent, and the hash of a bundle it kept. */
function engineAnswering(result: PlaybookExecutionResult): Pick<Engine, "investigate"> {
  return { investigate: async () => ({ result, charts: new Map(), audit: { queries: [QUERY], evidenceSha256: "ab".repeat(32) } }) };
}

function deps(extra: Partial<AuditDeps> = {}): AuditDeps {
  return { trail, retentionDays: 30, destinations: (orgId) => auditDestinations(catalog.organizations.get(orgId), undefined), catalog, logger, ...extra };
}

async function recordOf(executionId: string): Promise<AuditRecord | undefined> {
  return (await trail.read("acme", { limit: 10, execution: executionId })).records[0];
}

const running = (jobId: string) => ({ jobId, signal: new AbortController().signal });

describe("auditedExecution", () => {
  it("appends who asked, the playbook and its version, the queries, what went to Slack, the evidence's hash and the conclusion, once", async () => {
    const result: PlaybookExecutionResult = { highlights: "No cause", verdict: { conclusion: "no-cause", unchecked: [] } as never };
    const engine = engineAnswering(result);
    const run = async (used: Pick<Engine, "investigate">) => {
      const investigation = await used.investigate(job(), undefined, "e-1");
      await (await fetch(`${slack.url}/api/chat.postMessage?unused=1`, { method: "POST", body: "payload" })).text();
      return investigation.result;
    };
    const sinkPath = join(dir, "audit.jsonl");

    await auditedExecution(deps({ sink: jsonLinesSink(sinkPath) }), engine, job(), running("e-1"), run);
    await auditedExecution(deps({ sink: jsonLinesSink(sinkPath) }), engine, job(), running("e-1"), run);

    const record = await recordOf("e-1");
    const definition = catalog.organizations.get("acme")?.playbooks.get("checkout-latency");
    expect(record).toMatchObject({
      executionId: "e-1",
      requestId: "req-1",
      orgId: "acme",
      requestedBy: REQUESTED_BY,
      playbook: { name: "checkout-latency", version: playbookVersion(definition) },
      issue: { time: "2026-11-20T14:08:00Z", attributes: { service: "checkout" } },
      outcome: "success",
      conclusion: "no-cause",
      queries: [QUERY],
      sent: [{ service: "slack", method: "POST", url: `${slack.url}/api/chat.postMessage`, bytes: 7, status: 200 }],
      evidenceSha256: "ab".repeat(32),
    });
    expect(record?.playbook.version).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect((await trail.read("acme", { limit: 10, execution: "e-1" })).records).toHaveLength(1);
    // The file got the record once too, as the stream holds it.
    const lines = (await readFile(sinkPath, "utf8")).trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(AuditRecord.parse(JSON.parse(lines[0] ?? ""))).toEqual(AuditRecord.parse({ ...record, id: undefined }));
  });

  it("names the playbook a chat link resolved to, and a refusal as refused", async () => {
    const message: MessageExecutionJob = {
      v: 1,
      replyTo: "api-1",
      deadline: Date.now() + 60_000,
      orgId: "acme",
      requestId: "req-2",
      messageLink: "https://acme.slack.com/archives/C1/p1714651200000100",
      liveRun: false,
      requestedBy: {
        clientId: "client-1",
        entry: { kind: "chat-link", route: "POST /playbook/execution", messageLink: "https://acme.slack.com/archives/C1/p1714651200000100" },
      },
    };
    const engine = engineAnswering({ highlights: "ok" });
    await auditedExecution(
      deps(),
      engine,
      message,
      running("e-2"),
      async (used) => (await used.investigate(job({ requestId: "req-2" }), undefined, "e-2")).result,
    );
    await auditedExecution(
      deps(),
      engine,
      { ...message, requestId: "req-3" },
      running("e-3"),
      async () => new RequestRefusal([{ path: ["messageLink"], message: "no playbook matches the message" }]),
    );

    expect(await recordOf("e-2")).toMatchObject({ playbook: { name: "checkout-latency" }, outcome: "success", requestedBy: message.requestedBy });
    expect(await recordOf("e-3")).toMatchObject({
      playbook: { name: "" },
      outcome: "refused",
      error: "messageLink: no playbook matches the message",
      queries: [],
    });
  });

  it("records an execution its deadline stopped, and one that threw; not one handed back at a shutdown", async () => {
    const engine = engineAnswering({ highlights: "partial", error: "Stopped at the deadline" });
    const timedOut = new AbortController();
    timedOut.abort(new DOMException("its caller's deadline passed", "TimeoutError"));
    await auditedExecution(
      deps(),
      engine,
      job(),
      { jobId: "e-4", signal: timedOut.signal },
      async (used) => (await used.investigate(job(), undefined, "e-4")).result,
    );

    const failing = auditedExecution(deps(), engine, job(), running("e-5"), async () => {
      throw new Error("Redis went away");
    });
    await expect(failing).rejects.toThrow("Redis went away");

    const shutdown = new AbortController();
    shutdown.abort("worker shutting down");
    await auditedExecution(
      deps(),
      engine,
      job(),
      { jobId: "e-6", signal: shutdown.signal },
      async (used) => (await used.investigate(job(), undefined, "e-6")).result,
    );

    expect(await recordOf("e-4")).toMatchObject({ outcome: "deadline", error: "Stopped at the deadline", queries: [QUERY] });
    expect(await recordOf("e-5")).toMatchObject({ outcome: "error", error: "Redis went away", queries: [] });
    expect(await recordOf("e-6")).toBeUndefined();
  });

  it("carries the budget a result reports", async () => {
    const budget = { spent: { queries: 3, bytes: 1200, wallTimeMs: 40, modelTokens: 0 }, limit: { queries: 10 } };
    const result: PlaybookExecutionResult = { highlights: "ok", budget };
    await auditedExecution(deps(), engineAnswering(result), job(), running("e-7"), async (used) => (await used.investigate(job(), undefined, "e-7")).result);
    expect((await recordOf("e-7"))?.budget).toEqual(budget);
  });
});
