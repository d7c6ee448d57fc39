import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { ExecutionStatus, PlaybookExecutionInput, SimilarExecutions } from "@pes/contracts";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createMcpServer } from "./mcp-server.js";
import { ToolError, type PesService } from "./pes-service.js";
import { INTERNAL_ERROR } from "./tools/pes-tool.js";

// The tool layer in-process, over the SDK's linked in-memory transports, with a service that answers as
// the test sets it: what the model sees of arguments that do not fit a contract, of a refusal and of a
// failure nobody expected. End to end, against the API and `pes mcp`, with real bundles replayed:
// test/e2e/mcp.test.ts.

const running: ExecutionStatus = { id: "0b6d4f0e-4c1a-4f57-9b7e-3f7f6a0f2c11", status: "running", createdAt: "2026-11-21T13:43:00.000Z" };

/** A service whose every method throws `error` unless the test gives it another body. */
function serviceThrowing(error: unknown, overrides: Partial<PesService> = {}): PesService {
  const fail = async (): Promise<never> => {
    throw error;
  };
  return { listPlaybooks: fail, investigate: fail, readExecution: fail, readEvidence: fail, findSimilar: fail, ...overrides };
}

const closing: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

async function connected(service: PesService, reports: Array<{ error: unknown; tool: string }> = []): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const server = createMcpServer(service, (error, tool) => reports.push({ error, tool }));
  const client = new Client({ name: "test", version: "1.0.0" });
  await server.connect(serverSide);
  await client.connect(clientSide);
  closing.push(
    () => client.close(),
    () => server.close(),
  );
  return client;
}

const TextContent = z.array(z.object({ type: z.literal("text"), text: z.string() }));

async function toolError(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
  const answer = await client.callTool({ name, arguments: args });
  expect(answer.isError).toBe(true);
  return TextContent.parse(answer.content)
    .map(({ text }) => text)
    .join("");
}

describe("the MCP tools", () => {
  it("answers structured output and the same JSON as text", async () => {
    const investigated: PlaybookExecutionInput[] = [];
    const completed: ExecutionStatus = { ...running, status: "completed", result: { highlights: "CPU of web-1 at 97 %" } };
    const client = await connected(
      serviceThrowing(new Error("not called"), {
        investigate: async (input) => {
          investigated.push(input);
          return completed;
        },
      }),
    );
    const answer = await client.callTool({ name: "investigate_issue", arguments: { bookName: " node-cpu ", attributes: { host: "web-1" } } });
    expect(answer.structuredContent).toEqual(completed);
    expect(JSON.parse(TextContent.parse(answer.content)[0]?.text ?? "")).toEqual(completed);
    // Parsed with the contract before the service sees it (bookName is trimmed).
    expect(investigated).toEqual([{ bookName: "node-cpu", attributes: { host: "web-1" } }]);
  });

  it("refuses arguments that do not fit the contract with its issues, before the service is asked", async () => {
    const client = await connected(serviceThrowing(new Error("not called")));
    expect(await toolError(client, "investigate_issue", { attributes: { host: "web-1" }, colour: "red" })).toBe(
      'Unrecognized key: "colour"; bookName: One of bookName, messageLink or title is required to identify the playbook',
    );
    expect(await toolError(client, "get_execution", {})).toBe("executionId: Invalid input: expected string, received undefined");
  });

  it("passes a refusal on in its own words, and hides what nobody expected behind a generic error it reports", async () => {
    expect(await toolError(await connected(serviceThrowing(new ToolError("No such execution"))), "get_execution", { executionId: running.id })).toBe(
      "No such execution",
    );
    const reports: Array<{ error: unknown; tool: string }> = [];
    const bug = new Error("connect ECONNREFUSED 10.0.0.7:6379");
    const client = await connected(serviceThrowing(bug), reports);
    expect(await toolError(client, "list_playbooks", {})).toBe(INTERNAL_ERROR);
    expect(reports).toEqual([{ error: bug, tool: "list_playbooks" }]);
  });

  it("gives a verdict only once the execution completed with one", async () => {
    const executions: ExecutionStatus[] = [running, { ...running, status: "completed", result: { error: "Data source metrics timed out" } }];
    const client = await connected(serviceThrowing(new Error("not called"), { readExecution: async () => executions.shift() ?? running }));
    expect(await toolError(client, "get_verdict", { executionId: running.id })).toBe("The execution is running: its verdict comes once it completed");
    expect(await toolError(client, "get_verdict", { executionId: running.id })).toBe("The execution reached no verdict: Data source metrics timed out");
  });

  it("replays exactly one bundle: an execution's or one given", async () => {
    const client = await connected(serviceThrowing(new ToolError("No evidence kept for such an execution")));
    expect(await toolError(client, "replay_evidence_bundle", {})).toBe("Give exactly one of executionId and bundle");
    expect(await toolError(client, "replay_evidence_bundle", { executionId: running.id })).toBe("No evidence kept for such an execution");
  });

  it("finds past incidents like an execution, by its id, as the HTTP API answers them", async () => {
    const similar: SimilarExecutions = {
      executionId: running.id,
      history: [
        {
          executionId: "5f0c2a9e-8d1b-4c3a-9e7f-2b4d6a8c0e13",
          at: "2026-11-18T09:12:00.000Z",
          playbook: "memory-pressure",
          conclusion: "cause",
          cause: { kind: "oom", subject: "pod/ledger", detail: "OOMKilled" },
          similarity: 0.8,
          matched: [{ field: "cause.kind", value: "oom" }],
          differed: [{ field: "attribute.node", now: "node-2", past: "node-5" }],
          occurrences: { count: 3, first: "2026-11-02T10:00:00.000Z", last: "2026-11-18T09:12:00.000Z" },
          confirmed: { verdict: "right", resolution: "Raised the ledger's memory limit", by: "alice" },
        },
      ],
    };
    const asked: string[] = [];
    const client = await connected(
      serviceThrowing(new Error("not called"), {
        findSimilar: async (executionId) => {
          asked.push(executionId);
          return similar;
        },
      }),
    );
    const listing = (await client.listTools()).tools.find((tool) => tool.name === "find_similar_incidents");
    expect(listing?.annotations?.readOnlyHint).toBe(true);
    expect(listing?.description).toContain("verify");
    const answer = await client.callTool({ name: "find_similar_incidents", arguments: { executionId: running.id } });
    expect(answer.structuredContent).toEqual(similar);
    expect(asked).toEqual([running.id]);
    const refused = "Memory is off for this organization (memory.recall in its configuration): no execution is remembered or recalled";
    expect(await toolError(await connected(serviceThrowing(new ToolError(refused))), "find_similar_incidents", { executionId: running.id })).toBe(refused);
  });

  it("answers an unknown tool with a protocol error", async () => {
    const client = await connected(serviceThrowing(new Error("not called")));
    await expect(client.callTool({ name: "delete_incident", arguments: {} })).rejects.toMatchObject({ code: -32602 });
  });
});
