import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "@pes/local-services";
import type { ActionRequest } from "../connector.js";
import { sendJson, startTestServer, type TestHttpServer } from "../testing/test-http-server.js";
import { runHttpAction, valueAt } from "./http-connector.js";
import type { HttpAction, HttpDataSource } from "./http-schemas.js";

const window = {
  start: new Date("2026-11-20T13:08:00Z"),
  time: new Date("2026-11-20T14:08:00Z"),
  end: new Date("2026-11-20T14:23:00Z"),
};

function request(dataSource: HttpDataSource, spec: Partial<HttpAction>, attributes: Record<string, string> = { service: "check out/../x?y#z" }): ActionRequest<"http"> {
  return {
    title: "Last deploy",
    dataSource,
    spec: { method: "GET", path: "/deploys/{{service}}", answerField: "version", ...spec },
    attributes,
    window,
    signal: AbortSignal.timeout(10_000),
  };
}

describe("runHttpAction", () => {
  let server: TestHttpServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
    delete process.env.PES_TEST_HTTP_KEY;
  });

  it("GETs the path with each value as one URL component, sending configured headers", async () => {
    server = await startTestServer((_request, response) => sendJson(response, 200, { version: "v1.2.3" }));
    process.env.PES_TEST_HTTP_KEY = "key-123456";
    const outcome = await runHttpAction(
      request({ type: "http", url: `${server.url}/api/`, headers: { "x-api-key": { env: "PES_TEST_HTTP_KEY" }, "x-team": "sre" } }, {}),
    );
    expect(outcome).toEqual({
      status: "normal",
      shortAnswer: "Last deploy: v1.2.3",
      mostImportantLink: `${server.url}/api/deploys/check%20out%2F..%2Fx%3Fy%23z`,
    });
    const seen = server.requests[0];
    expect(seen?.method).toBe("GET");
    expect(seen?.url).toBe("/api/deploys/check%20out%2F..%2Fx%3Fy%23z");
    expect(seen?.headers["x-api-key"]).toBe("key-123456");
    expect(seen?.headers["x-team"]).toBe("sre");
  });

  it("POSTs the body template with values as JSON strings that cannot break its structure", async () => {
    server = await startTestServer((_request, response) => sendJson(response, 200, { data: { items: [{ state: { ok: true, n: 3 } }] } }));
    const hostile = '", "admin": true, "x": "';
    const outcome = await runHttpAction(
      request(
        { type: "http", url: server.url },
        {
          method: "POST",
          path: "/search",
          body: { filter: { service: "{{service}}", tags: ["svc:{{service}}", 5] }, limit: 10 },
          answerField: "data.items.0.state",
          link: "https://status.example.com/services/{{service}}?from=dash",
        },
        { service: hostile },
      ),
    );
    expect(outcome).toEqual({
      status: "normal",
      shortAnswer: 'Last deploy: {"ok":true,"n":3}',
      mostImportantLink: `https://status.example.com/services/${encodeURIComponent(hostile)}?from=dash`,
    });
    const seen = server.requests[0];
    expect(seen?.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(seen?.body ?? "")).toEqual({ filter: { service: hostile, tags: [`svc:${hostile}`, 5] }, limit: 10 });
  });

  it("cuts long answers", async () => {
    server = await startTestServer((_request, response) => sendJson(response, 200, { version: "x".repeat(1000) }));
    const outcome = await runHttpAction(request({ type: "http", url: server.url }, {}));
    expect(outcome.shortAnswer.length).toBe(300);
    expect(outcome.shortAnswer.endsWith("…")).toBe(true);
  });

  it("fails on an HTTP error without echoing the body or a header", async () => {
    process.env.PES_TEST_HTTP_KEY = "key-123456";
    server = await startTestServer((seen, response) => sendJson(response, 500, { error: "boom", echo: seen.headers }));
    const outcome = await runHttpAction(request({ type: "http", url: server.url, headers: { authorization: { env: "PES_TEST_HTTP_KEY" } } }, {}));
    expect(outcome).toMatchObject({ status: "failed", shortAnswer: "Last deploy: the data source answered HTTP 500 Internal Server Error" });
    expect(outcome.mostImportantLink).toBe(`${server.url}/deploys/check%20out%2F..%2Fx%3Fy%23z`);
    expect(JSON.stringify(outcome)).not.toContain("key-123456");
  });

  it("redacts a secret header that an API echoes into the answer", async () => {
    process.env.PES_TEST_HTTP_KEY = "key-123456";
    server = await startTestServer((seen, response) => sendJson(response, 200, { version: `seen ${String(seen.headers["x-api-key"])}` }));
    const outcome = await runHttpAction(request({ type: "http", url: server.url, headers: { "x-api-key": { env: "PES_TEST_HTTP_KEY" } } }, {}));
    expect(outcome.shortAnswer).toBe("Last deploy: seen [redacted]");
  });

  it("fails when the answer is not JSON, or lacks the field", async () => {
    server = await startTestServer((seen, response) => {
      if (seen.url.startsWith("/deploys/html")) {
        response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
        response.end("<html></html>");
      } else {
        sendJson(response, 200, { other: 1 });
      }
    });
    const html = await runHttpAction(request({ type: "http", url: server.url }, {}, { service: "html" }));
    expect(html).toMatchObject({ status: "failed", shortAnswer: "Last deploy: the data source answered with something that is not JSON (text/html)" });
    const missing = await runHttpAction(request({ type: "http", url: server.url }, {}, { service: "json" }));
    expect(missing).toMatchObject({ status: "failed", shortAnswer: "Last deploy: the answer has no field version" });
  });

  it("refuses an answer too large to hold, instead of buffering it", async () => {
    const chunk = Buffer.alloc(1024 * 1024, "x");
    server = await startTestServer((_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      // Streams until the client gives up: 33 chunks of 1 MiB would exceed the 32 MiB cap.
      let sent = 0;
      const pump = (): void => {
        while (sent < 33) {
          sent += 1;
          if (!response.write(chunk)) {
            response.once("drain", pump);
            return;
          }
        }
        response.end();
      };
      pump();
    });
    const outcome = await runHttpAction(request({ type: "http", url: server.url }, {}));
    expect(outcome.status).toBe("failed");
    expect(outcome.shortAnswer).toMatch(/larger than 32 MiB/);
  });

  it("fails at its deadline when the API does not answer", async () => {
    server = await startTestServer(() => {
      // held until the deadline
    });
    const outcome = await runHttpAction({ ...request({ type: "http", url: server.url }, {}), signal: AbortSignal.timeout(100) });
    expect(outcome).toMatchObject({ status: "failed", shortAnswer: "Last deploy: no answer from the data source before the deadline (timed out)" });
  });

  it("fails when nothing listens, and skips when attributes are missing", async () => {
    const port = await freePort();
    const refused = await runHttpAction(request({ type: "http", url: `http://127.0.0.1:${port}` }, {}));
    expect(refused).toMatchObject({ status: "failed", shortAnswer: "Last deploy: could not reach the data source (connection refused)" });
    const skipped = await runHttpAction(request({ type: "http", url: `http://127.0.0.1:${port}` }, {}, {}));
    expect(skipped).toEqual({ status: "skipped", shortAnswer: "Last deploy: not run, the issue has no attribute service" });
  });

  it("fails when a secret header's variable is unset, naming only the variable", async () => {
    server = await startTestServer((_request, response) => sendJson(response, 200, { version: "v1" }));
    const outcome = await runHttpAction(request({ type: "http", url: server.url, headers: { "x-api-key": { env: "PES_TEST_HTTP_KEY" } } }, {}));
    expect(outcome).toMatchObject({
      status: "failed",
      shortAnswer: "Last deploy: cannot build the request headers: environment variable PES_TEST_HTTP_KEY is not set",
    });
    expect(server.requests).toHaveLength(0);
  });
});

describe("valueAt", () => {
  const document = { a: { b: [{ c: 1 }, { c: null }], "": 2 }, list: [0, false] };
  it.each([
    ["a.b.0.c", 1],
    ["a.b.1.c", null],
    ["list.1", false],
    ["a.b.2.c", undefined],
    ["a.b.x", undefined],
    ["a.toString", undefined],
    ["list.length", undefined],
    ["missing", undefined],
  ])("%s → %j", (path, expected) => {
    expect(valueAt(document, path)).toBe(expected);
  });
});
