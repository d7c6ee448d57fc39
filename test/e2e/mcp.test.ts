import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  describeIssues,
  EvidenceBundle,
  ExecutionStatus,
  PlaybookExecutionInput,
  PlaybookList,
  ReplayReport,
  SimilarExecutions,
  ValidationError,
  Verdict,
} from "@pes/contracts";
import type { TestHttpServer } from "@pes/local-services";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { repoRoot } from "../support/processes.js";
import { startRisingPrometheus } from "../support/rising-prometheus.js";
import { exampleConfig, postJson, startStack, type Stack } from "../support/stack.js";

// Assistants' access: the SDK's own clients against the real API and a worker, over Streamable HTTP
// (/mcp) and over stdio through `pes mcp`, which calls the API with the user's token. acme keeps its
// executions' evidence, so that its bundles can be read and replayed, and remembers them, so that later ones
// find them similar.

const time = "2026-11-21T13:43:00Z";
const TOOLS = [
  "list_playbooks",
  "investigate_issue",
  "get_execution",
  "get_verdict",
  "get_evidence_bundle",
  "replay_evidence_bundle",
  "find_similar_incidents",
];

let prometheus: TestHttpServer;
let config: Awaited<ReturnType<typeof exampleConfig>>;
let stack: Stack;
const clients: Client[] = [];

beforeAll(async () => {
  prometheus = await startRisingPrometheus();
  config = await exampleConfig({ metrics: prometheus.url }, { organizationFields: { evidence: { keep: true, retentionDays: 1 }, memory: { recall: true } } });
  stack = await startStack({ name: "mcp", configDir: config.dir });
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

afterAll(async () => {
  await stack?.stop();
  await prometheus?.close();
  await config?.remove();
});

async function connect(transport: Transport): Promise<Client> {
  const client = new Client({ name: "pes-e2e", version: "1.0.0" });
  clients.push(client);
  await client.connect(transport);
  return client;
}

/** An MCP client of the API over Streamable HTTP, with the token's bearer (none: no Authorization header). */
function overHttp(token: string | undefined): Promise<Client> {
  const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
  return connect(new StreamableHTTPClientTransport(new URL("/mcp", stack.baseUrl), { requestInit: { headers } }));
}

/** An MCP client of `pes mcp`, started as an assistant starts it, with PES_URL and PES_TOKEN. */
function overStdio(token: string): Promise<Client> {
  return connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [`${repoRoot}packages/client/bin/pes.js`, "mcp"],
      env: { PATH: process.env.PATH ?? "", PES_URL: stack.baseUrl, PES_TOKEN: token },
      stderr: "pipe",
    }),
  );
}

/** A tool's structured answer, parsed with the contract it declares; a tool error fails the test with its text. */
async function call<T>(client: Client, name: string, args: Record<string, unknown>, contract: z.ZodType<T>): Promise<T> {
  const answer = await client.callTool({ name, arguments: args });
  if (answer.isError === true) throw new Error(`${name} answered a tool error: ${JSON.stringify(answer.content)}`);
  return contract.parse(answer.structuredContent);
}

/** A tool error's text. */
async function refusal(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
  const answer = await client.callTool({ name, arguments: args });
  expect(answer.isError).toBe(true);
  return z.array(z.object({ type: z.literal("text"), text: z.string() })).parse(answer.content)[0]?.text ?? "";
}

/** A contract's own JSON Schema (draft-07, the SDK client's), what it cannot say left open, as the OpenAPI document does. */
function definitionOf(contract: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const id = z.globalRegistry.get(contract)?.id ?? "";
  const json = z.toJSONSchema(contract, { target: "draft-7", io, unrepresentable: "any" });
  return z.record(z.string(), z.record(z.string(), z.unknown())).parse(json.definitions)[id] ?? {};
}

const investigation = { bookName: "node-cpu", attributes: { host: "web-1" }, time };

describe("MCP over Streamable HTTP", () => {
  it("lists the tools, with the HTTP API's contracts as their schemas", async () => {
    const client = await overHttp(stack.token());
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(TOOLS);
    const investigate = tools.find((tool) => tool.name === "investigate_issue");
    expect(investigate?.inputSchema).toMatchObject(definitionOf(PlaybookExecutionInput, "input"));
    expect(investigate?.outputSchema).toMatchObject(definitionOf(ExecutionStatus, "output"));
    expect(tools.find((tool) => tool.name === "get_evidence_bundle")?.outputSchema).toMatchObject(definitionOf(EvidenceBundle, "output"));
    expect(investigate?.annotations?.readOnlyHint).toBe(false);
    expect(tools.filter((tool) => tool.annotations?.readOnlyHint === true).map((tool) => tool.name)).toEqual(
      TOOLS.filter((name) => name !== "investigate_issue"),
    );
  });

  it("lists the caller's organization's playbooks", async () => {
    const acme = await call(await overHttp(stack.token()), "list_playbooks", {}, z.object({ playbooks: PlaybookList }));
    expect(acme.playbooks.map((playbook) => playbook.name).sort()).toEqual(["checkout-errors", "checkout-latency", "node-cpu"]);
    const shop = await call(await overHttp(stack.token({ org: "shop" })), "list_playbooks", {}, z.object({ playbooks: PlaybookList }));
    expect(shop.playbooks.map((playbook) => playbook.name)).not.toContain("node-cpu");
  });

  it("runs an investigation through the queue, then reads its execution, verdict and evidence, and replays it", async () => {
    const client = await overHttp(stack.token());
    // Listed first, the tools' output schemas are what the SDK's client checks each structured answer against.
    await client.listTools();
    const execution = await call(client, "investigate_issue", investigation, ExecutionStatus);
    expect(execution.status).toBe("completed");
    expect(execution.result?.error).toBeUndefined();
    expect(execution.result?.gadgetsHighlights?.[0]?.title).toBe("CPU of web-1");
    const verdict = execution.result?.verdict;
    expect(verdict).toBeDefined();

    expect(await call(client, "get_execution", { executionId: execution.id }, ExecutionStatus)).toEqual(execution);
    expect(await call(client, "get_verdict", { executionId: execution.id }, Verdict)).toEqual(verdict);

    const bundle = await call(client, "get_evidence_bundle", { executionId: execution.id }, EvidenceBundle);
    expect(bundle.executionId).toBe(execution.id);
    expect(bundle.verdict).toEqual(verdict);
    // The same bundle the HTTP API serves.
    const served = await fetch(`${stack.baseUrl}/playbook/execution/${execution.id}/evidence`, { headers: { authorization: `Bearer ${stack.token()}` } });
    expect(EvidenceBundle.parse(await served.json())).toEqual(bundle);

    const replayed = await call(client, "replay_evidence_bundle", { executionId: execution.id }, ReplayReport);
    expect(replayed).toMatchObject({ executionId: execution.id, verdict, sameAsRecorded: true });
    // A bundle given whole, its recorded verdict removed: the same verdict, nothing to compare with.
    const { verdict: _recorded, ...unrecorded } = bundle;
    const given = await call(client, "replay_evidence_bundle", { bundle: unrecorded }, ReplayReport);
    expect(given.verdict).toEqual(verdict);
    expect(given.sameAsRecorded).toBeUndefined();
  });

  it("finds the past incidents like an execution, as GET /playbook/execution/{id}/similar answers them", async () => {
    const client = await overHttp(stack.token());
    await client.listTools();
    // The same rise of CPU on two hosts, a few minutes apart: the later one finds the earlier one.
    const first = await call(client, "investigate_issue", { ...investigation, attributes: { host: "web-4" }, time: "2026-11-21T13:50:00Z" }, ExecutionStatus);
    const second = await call(client, "investigate_issue", { ...investigation, attributes: { host: "web-5" }, time: "2026-11-21T13:55:00Z" }, ExecutionStatus);
    expect(second.result?.verdict?.symptoms.map((symptom) => symptom.kind)).toEqual(["rise"]);
    const similar = await call(client, "find_similar_incidents", { executionId: second.id }, SimilarExecutions);
    expect(similar.executionId).toBe(second.id);
    const [entry] = similar.history;
    expect(entry).toMatchObject({ executionId: first.id, at: "2026-11-21T13:50:00.000Z", playbook: "node-cpu" });
    expect(entry?.matched).toContainEqual({ field: "symptom.kind", value: "rise" });
    expect(entry?.differed).toContainEqual({ field: "attribute.host", now: "web-5", past: "web-4" });
    expect(entry?.occurrences.last).toBe("2026-11-21T13:55:00.000Z");
    expect(similar.history.map((past) => past.executionId)).not.toContain(second.id);
    // The same answer the HTTP API gives.
    const served = await fetch(`${stack.baseUrl}/playbook/execution/${second.id}/similar`, { headers: { authorization: `Bearer ${stack.token()}` } });
    expect(served.status).toBe(200);
    expect(SimilarExecutions.parse(await served.json())).toEqual(similar);
  });

  it("answers a refused investigation as a tool error with the HTTP API's words", async () => {
    const client = await overHttp(stack.token());
    const input = { bookName: "no-such-book", time };
    const http = await postJson(`${stack.baseUrl}/playbook/execution`, stack.token(), input);
    expect(http.status).toBe(400);
    const { error } = ValidationError.parse(http.body);
    expect(typeof error).not.toBe("string");
    expect(await refusal(client, "investigate_issue", input)).toBe(typeof error === "string" ? error : describeIssues(error));
    expect(await refusal(client, "replay_evidence_bundle", {})).toBe("Give exactly one of executionId and bundle");
  });

  it("finds no execution of another organization", async () => {
    const acme = await overHttp(stack.token());
    const execution = await call(acme, "investigate_issue", { ...investigation, attributes: { host: "web-2" } }, ExecutionStatus);
    const shop = await overHttp(stack.token({ org: "shop" }));
    expect(await refusal(shop, "get_execution", { executionId: execution.id })).toBe("No such execution");
    expect(await refusal(shop, "get_verdict", { executionId: execution.id })).toBe("No such execution");
    expect(await refusal(shop, "get_evidence_bundle", { executionId: execution.id })).toBe("No evidence kept for such an execution");
    expect(await refusal(shop, "replay_evidence_bundle", { executionId: execution.id })).toBe("No evidence kept for such an execution");
    expect(await refusal(shop, "find_similar_incidents", { executionId: execution.id })).toBe("No such execution");
    expect(await refusal(acme, "get_execution", { executionId: "not-an-id" })).toBe("No such execution");
  });

  it("refuses a client without a token (401) or of an organization whose API is not enabled (403)", async () => {
    await expect(overHttp(undefined)).rejects.toMatchObject({ code: 401 });
    await expect(overHttp(stack.token({ org: "globex" }))).rejects.toMatchObject({ code: 403 });
    const bare = await fetch(`${stack.baseUrl}/mcp`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(bare.status).toBe(401);
    expect(bare.headers.get("www-authenticate")).toBe("Bearer");
  });

  it("keeps no session: GET and DELETE are 405 once authenticated", async () => {
    const headers = { authorization: `Bearer ${stack.token()}` };
    for (const method of ["GET", "DELETE"]) {
      const response = await fetch(`${stack.baseUrl}/mcp`, { method, headers });
      expect(response.status).toBe(405);
      expect(response.headers.get("allow")).toBe("POST");
      expect((await fetch(`${stack.baseUrl}/mcp`, { method })).status).toBe(401);
    }
  });
});

describe("MCP over stdio through pes mcp", () => {
  it("serves the same tools, calling the API with the user's token", async () => {
    const client = await overStdio(stack.token());
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(TOOLS);
    const execution = await call(client, "investigate_issue", { ...investigation, attributes: { host: "web-3" } }, ExecutionStatus);
    expect(execution.status).toBe("completed");
    expect(execution.result?.gadgetsHighlights?.[0]?.title).toBe("CPU of web-3");
    expect(await call(client, "get_verdict", { executionId: execution.id }, Verdict)).toEqual(execution.result?.verdict);
    const replayed = await call(client, "replay_evidence_bundle", { executionId: execution.id }, ReplayReport);
    expect(replayed).toMatchObject({ executionId: execution.id, verdict: execution.result?.verdict, sameAsRecorded: true });

    const similar = await call(client, "find_similar_incidents", { executionId: execution.id }, SimilarExecutions);
    const served = await fetch(`${stack.baseUrl}/playbook/execution/${execution.id}/similar`, { headers: { authorization: `Bearer ${stack.token()}` } });
    expect(SimilarExecutions.parse(await served.json())).toEqual(similar);
    expect(similar.history.length).toBeGreaterThan(0);

    const shop = await overStdio(stack.token({ org: "shop" }));
    expect(await refusal(shop, "get_execution", { executionId: execution.id })).toBe("No such execution");
    expect(await refusal(shop, "find_similar_incidents", { executionId: execution.id })).toBe("No such execution");
  });
});
