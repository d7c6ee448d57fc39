// Retries of a data source's HTTP client against a real local server: which answers are sent again,
// what Retry-After does against the deadline, and which requests are never repeated.
import { sendJson, startTestHttpServer, type TestHttpHandler, type TestHttpServer } from "@pes/local-services";
import { afterEach, describe, expect, it } from "vitest";
import type { HttpClient, HttpRequestOptions } from "./http-client.js";
import { MAX_ATTEMPTS } from "./retry-policy.js";
import { createHttpClient } from "./undici-http-client.js";

const opened: Array<{ server: TestHttpServer; client: HttpClient }> = [];

afterEach(async () => {
  for (const { server, client } of opened.splice(0)) {
    await client.close();
    await server.close();
  }
});

/** A server answering the n-th request (0-based) with `answers[n]`, the last one ever after. */
async function serve(...answers: TestHttpHandler[]): Promise<{ server: TestHttpServer; client: HttpClient }> {
  let seen = 0;
  const server = await startTestHttpServer((request, response) => {
    const answer = answers[Math.min(seen, answers.length - 1)];
    seen += 1;
    return answer?.(request, response);
  });
  const pair = { server, client: createHttpClient() };
  opened.push(pair);
  return pair;
}

const ok: TestHttpHandler = (_request, response) => sendJson(response, 200, { ok: true });
const status =
  (code: number, headers: Record<string, string> = {}): TestHttpHandler =>
  (_request, response) => {
    response.writeHead(code, { "content-type": "text/plain", ...headers });
    response.end(`status ${code}`);
  };
/** Resets the connection under the request. */
const reset: TestHttpHandler = (_request, response) => {
  response.req.socket.resetAndDestroy();
};

const get = (extra: Partial<HttpRequestOptions> = {}): HttpRequestOptions => ({ method: "GET", headers: {}, signal: AbortSignal.timeout(20_000), ...extra });

describe("a data source's HTTP client retries", () => {
  it("a GET answered 429, then answers with the next answer", async () => {
    const { server, client } = await serve(status(429), ok);
    const answer = await client.request(`${server.url}/x`, get());
    expect(answer.status).toBe(200);
    expect(server.requests).toHaveLength(2);
  });

  it("502, 503 and 504 alike, and a connection reset", async () => {
    const { server, client } = await serve(status(502), status(503), status(504), reset, ok);
    // Four sends in all: the fourth is the reset, which the attempts no longer cover.
    await expect(client.request(`${server.url}/x`, get())).rejects.toThrow();
    expect(server.requests).toHaveLength(MAX_ATTEMPTS);
    const again = await serve(reset, ok);
    expect((await again.client.request(`${again.server.url}/x`, get())).status).toBe(200);
    expect(again.server.requests).toHaveLength(2);
  });

  it("gives the last answer once the attempts are spent", async () => {
    const { server, client } = await serve(status(503));
    const answer = await client.request(`${server.url}/x`, get());
    expect(answer.status).toBe(503);
    expect(answer.body.toString()).toBe("status 503");
    expect(server.requests).toHaveLength(MAX_ATTEMPTS);
  });

  it("waits what Retry-After asks when it fits before the deadline", async () => {
    const { server, client } = await serve(status(429, { "retry-after": "1" }), ok);
    const answer = await client.request(`${server.url}/x`, get({ deadline: Date.now() + 20_000 }));
    expect(answer.status).toBe(200);
    expect(server.requests).toHaveLength(2);
  });

  it("does not wait a Retry-After longer than the deadline leaves: the 429 is the answer", async () => {
    const { server, client } = await serve(status(429, { "retry-after": "60" }), ok);
    const answer = await client.request(`${server.url}/x`, get({ deadline: Date.now() + 5_000 }));
    expect(answer.status).toBe(429);
    expect(server.requests).toHaveLength(1);
  });

  it("stops waiting when the signal aborts, with its reason", async () => {
    const { server, client } = await serve(status(503, { "retry-after": "20" }), ok);
    const controller = new AbortController();
    const pending = client.request(`${server.url}/x`, get({ signal: controller.signal }));
    await server.waitForRequests(1);
    controller.abort(new DOMException("late", "TimeoutError"));
    await expect(pending).rejects.toThrow("late");
    expect(server.requests).toHaveLength(1);
  });

  it("never repeats a POST its caller did not mark idempotent, and repeats one it did", async () => {
    const { server, client } = await serve(status(503), ok);
    const post = (idempotent?: boolean): HttpRequestOptions => ({ ...get(), method: "POST", body: "q=1", ...(idempotent === undefined ? {} : { idempotent }) });
    expect((await client.request(`${server.url}/x`, post())).status).toBe(503);
    expect(server.requests).toHaveLength(1);
    const again = await serve(reset, status(503), ok);
    expect((await again.client.request(`${again.server.url}/x`, post(true))).status).toBe(200);
    expect(again.server.requests.map((request) => request.body)).toEqual(["q=1", "q=1", "q=1"]);
  });

  it("never repeats a POST whose connection reset: it may have been applied", async () => {
    const { server, client } = await serve(reset, ok);
    await expect(client.request(`${server.url}/x`, { ...get(), method: "POST", body: "x" })).rejects.toThrow();
    expect(server.requests).toHaveLength(1);
  });

  it("does not repeat other errors (a 500, a 404)", async () => {
    const { server, client } = await serve(status(500), ok);
    expect((await client.request(`${server.url}/x`, get())).status).toBe(500);
    const again = await serve(status(404), ok);
    expect((await again.client.request(`${again.server.url}/x`, get())).status).toBe(404);
    expect(server.requests.length + again.server.requests.length).toBe(2);
  });
});
