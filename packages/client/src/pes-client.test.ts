import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "@pes/local-services";
import { startScriptedApi, type ScriptedAnswer, type ScriptedApi } from "./testing/scripted-api.js";
import { ApiError, InvalidResponseError, TimeoutError, UnreachableError } from "./client-errors.js";
import { createClient, type ClientOptions } from "./pes-client.js";

const playbooks = [{ name: "node-cpu", monitorNames: ["High CPU on {{host}}"] }];
const result = { highlights: "CPU busy at 97 % on web-1", actionResults: [{ title: "CPU busy", shortAnswer: "97 %" }] };
const input = { bookName: "node-cpu", attributes: { host: "web-1" } };

let api: ScriptedApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

/** A client against a scripted API whose waits are recorded instead of spent. */
async function clientFor(answers: readonly ScriptedAnswer[], options: Partial<ClientOptions> = {}) {
  api = await startScriptedApi(answers);
  const waits: number[] = [];
  const client = createClient({
    baseUrl: api.url,
    token: "t0k3n",
    sleep: async (ms) => {
      waits.push(ms);
    },
    ...options,
  });
  return { api, client, waits };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (error: unknown) => error,
  );
}

describe("createClient", () => {
  it("lists playbooks with the bearer token, keeping the base URL's path prefix", async () => {
    api = await startScriptedApi([{ status: 200, body: playbooks }]);
    const client = createClient({ baseUrl: `${api.url}/pes`, token: "t0k3n" });
    expect(await client.listPlaybooks()).toEqual(playbooks);
    expect(api.requests).toMatchObject([{ method: "GET", url: "/pes/playbook", headers: { authorization: "Bearer t0k3n" } }]);
  });

  it("runs an execution with the input as JSON and answers the result", async () => {
    const { client } = await clientFor([{ status: 200, body: result }]);
    expect(await client.run(input)).toEqual(result);
    expect(api?.requests[0]).toMatchObject({ method: "POST", url: "/playbook/execution", headers: { "content-type": "application/json" } });
    expect(JSON.parse(api?.requests[0]?.body ?? "")).toEqual(input);
  });

  it("answers a result that carries error as a result, not as a failure (the API's 200 {error})", async () => {
    const { client } = await clientFor([{ status: 200, body: { error: "Execution timed out after 120000 ms" } }]);
    expect(await client.run(input)).toEqual({ error: "Execution timed out after 120000 ms" });
  });

  it("retries a 429 after the Retry-After the API gave, with the same request", async () => {
    const { api, client, waits } = await clientFor([
      { status: 429, body: { error: "Too many executions in flight; retry shortly" }, headers: { "retry-after": "2" } },
      { status: 200, body: result },
    ]);
    expect(await client.run(input)).toEqual(result);
    expect(waits).toEqual([2000]);
    expect(api.requests).toHaveLength(2);
    expect(api.requests[1]?.body).toBe(api.requests[0]?.body);
  });

  it("retries a 503 without Retry-After after a growing, jittered backoff", async () => {
    const unavailable = { status: 503, body: { error: "Service unavailable: the job queue cannot be reached" } };
    const { client, waits } = await clientFor([unavailable, unavailable, { status: 200, body: playbooks }]);
    expect(await client.listPlaybooks()).toEqual(playbooks);
    expect(waits).toHaveLength(2);
    expect(waits[0]).toBeGreaterThanOrEqual(250);
    expect(waits[0]).toBeLessThanOrEqual(500);
    expect(waits[1]).toBeGreaterThanOrEqual(500);
    expect(waits[1]).toBeLessThanOrEqual(1000);
  });

  it("waits for real between attempts by default", async () => {
    api = await startScriptedApi([
      { status: 429, body: { error: "busy" }, headers: { "retry-after": "0" } },
      { status: 200, body: playbooks },
    ]);
    const client = createClient({ baseUrl: api.url, token: "t0k3n" });
    expect(await client.listPlaybooks()).toEqual(playbooks);
    expect(api.requests).toHaveLength(2);
  });

  it("gives up after the configured attempts with the API's last error", async () => {
    const { api, client, waits } = await clientFor([{ status: 429, body: { error: "busy" }, headers: { "retry-after": "1" } }], {
      retry: { attempts: 3 },
    });
    const error = await rejection(client.run(input));
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ kind: "http", status: 429, body: { error: "busy" }, retryAfterMs: 1000 });
    expect(api.requests).toHaveLength(3);
    expect(waits).toEqual([1000, 1000]);
  });

  it("does not wait for a Retry-After beyond its waiting budget: the API's error comes at once", async () => {
    const { api, client, waits } = await clientFor([{ status: 503, body: { error: "keys unavailable" }, headers: { "retry-after": "60" } }], {
      retry: { maxWaitMs: 10_000 },
    });
    expect(await rejection(client.listPlaybooks())).toMatchObject({ status: 503, retryAfterMs: 60_000 });
    expect(api.requests).toHaveLength(1);
    expect(waits).toEqual([]);
  });

  it("does not wait for a Retry-After that outlasts the call's deadline", async () => {
    const { api, client } = await clientFor([{ status: 429, body: { error: "busy" }, headers: { "retry-after": "5" } }], { timeoutMs: 4000 });
    expect(await rejection(client.run(input))).toMatchObject({ status: 429 });
    expect(api.requests).toHaveLength(1);
  });

  it.each([400, 401, 403, 500, 502])("never retries a %i", async (status) => {
    const { api, client } = await clientFor([
      { status, body: { error: "no" } },
      { status: 200, body: result },
    ]);
    expect(await rejection(client.run(input))).toMatchObject({ status });
    expect(api.requests).toHaveLength(1);
  });

  it("throws a 400 as an ApiError with status, body, issues and the request id", async () => {
    const body = { error: [{ path: ["body", "bookName"], message: 'Unknown playbook "nope"' }] };
    const { client } = await clientFor([{ status: 400, body, headers: { "x-request-id": "req-42" } }]);
    const error = await rejection(client.run({ bookName: "nope" }));
    if (!(error instanceof ApiError)) throw error;
    expect(error.status).toBe(400);
    expect(error.body).toEqual(body);
    expect(error.issues).toEqual(body.error);
    expect(error.requestId).toBe("req-42");
    expect(error.message).toBe('HTTP 400: body.bookName: Unknown playbook "nope"');
  });

  it("keeps a body that is not JSON as text (a proxy's error page)", async () => {
    const { client } = await clientFor([{ status: 502, body: "<html>Bad Gateway</html>" }]);
    expect(await rejection(client.listPlaybooks())).toMatchObject({ status: 502, body: "<html>Bad Gateway</html>", issues: [] });
  });

  it("refuses a 200 whose body is not the contract's", async () => {
    const { client } = await clientFor([{ status: 200, body: { items: [] } }]);
    const error = await rejection(client.listPlaybooks());
    expect(error).toBeInstanceOf(InvalidResponseError);
    expect(error).toMatchObject({ kind: "response", status: 200 });
  });

  it("refuses a batch answer with a result count other than the input count", async () => {
    const { client } = await clientFor([{ status: 200, body: [result] }]);
    const error = await rejection(client.runBatch({ inputList: [input, input] }));
    expect(error).toBeInstanceOf(InvalidResponseError);
    expect(error).toMatchObject({ message: expect.stringMatching(/1 results for 2 inputs/) });
  });

  it("times out a call the API never answers", async () => {
    const { client } = await clientFor(["hold"]);
    const error = await rejection(client.run(input, { timeoutMs: 50 }));
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ kind: "timeout", timeoutMs: 50 });
  });

  it("stops when the caller aborts, with the caller's reason", async () => {
    const { api, client } = await clientFor(["hold"]);
    const controller = new AbortController();
    const pending = rejection(client.run(input, { signal: controller.signal }));
    await api.waitForRequests(1);
    const reason = new Error("pipeline cancelled");
    controller.abort(reason);
    expect(await pending).toBe(reason);
  });

  it("says the API is unreachable when nothing listens", async () => {
    const port = await freePort();
    const client = createClient({ baseUrl: `http://127.0.0.1:${port}`, token: "t0k3n" });
    const error = await rejection(client.listPlaybooks());
    expect(error).toBeInstanceOf(UnreachableError);
    expect(error).toMatchObject({ message: expect.stringMatching(/ECONNREFUSED/) });
  });

  it("asks a token function before every attempt", async () => {
    let issued = 0;
    const { api, client } = await clientFor(
      [
        { status: 429, body: { error: "busy" }, headers: { "retry-after": "0" } },
        { status: 200, body: playbooks },
      ],
      {
        token: () => `token-${++issued}`,
      },
    );
    await client.listPlaybooks();
    expect(api.requests.map((request) => request.headers.authorization)).toEqual(["Bearer token-1", "Bearer token-2"]);
  });

  const accepted = { id: "b-1", status: "running", createdAt: "2026-11-21T13:43:00.000Z", progress: { total: 2, done: 0, failed: 0 }, offset: 0, items: [] };

  it("submits an async batch with Prefer: respond-async and the Idempotency-Key, answering its status", async () => {
    const { api, client } = await clientFor([{ status: 202, body: accepted, headers: { location: "/playbook/execution/batch/b-1" } }]);
    expect(await client.submitBatch({ inputList: [input, input], channelId: "C1" }, { idempotencyKey: "nightly-1" })).toEqual(accepted);
    expect(api.requests[0]).toMatchObject({
      method: "POST",
      url: "/playbook/execution/batch",
      headers: { prefer: "respond-async", "idempotency-key": "nightly-1", authorization: "Bearer t0k3n" },
    });
    expect(JSON.parse(api.requests[0]?.body ?? "")).toEqual({ inputList: [input, input], channelId: "C1" });
  });

  it("sends an async batch again after a connection cut only under an Idempotency-Key", async () => {
    const keyed = await clientFor(["drop", { status: 202, body: accepted }]);
    expect(await keyed.client.submitBatch({ inputList: [input] }, { idempotencyKey: "k" })).toEqual(accepted);
    expect(keyed.api.requests).toHaveLength(2);
    expect(keyed.waits).toHaveLength(1);
    await keyed.api.close();

    const unkeyed = await clientFor(["drop", { status: 202, body: accepted }]);
    expect(await rejection(unkeyed.client.submitBatch({ inputList: [input] }))).toBeInstanceOf(UnreachableError);
    expect(unkeyed.api.requests).toHaveLength(1);
  });

  it("refuses a synchronous answer to an async batch (an API that ignored Prefer)", async () => {
    const { client } = await clientFor([{ status: 200, body: accepted }]);
    expect(await rejection(client.submitBatch({ inputList: [input] }))).toMatchObject({ kind: "response", message: expect.stringMatching(/expected 202/) });
  });

  it("reads a batch's page with offset and limit", async () => {
    const page = { ...accepted, offset: 1, items: [{ index: 1, executionId: "e-1", status: "completed", result }] };
    const { api, client } = await clientFor([{ status: 200, body: page }]);
    expect(await client.readBatch("b/1", { offset: 1, limit: 1 })).toEqual(page);
    expect(api.requests[0]?.url).toBe("/playbook/execution/batch/b%2F1?offset=1&limit=1");
  });

  it("refuses a base URL that is not http(s)", () => {
    expect(() => createClient({ baseUrl: "ftp://example.com" })).toThrow(/http\(s\)/);
  });
});
