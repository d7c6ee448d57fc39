import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { freePort, sendJson, startTestHttpServer, type SeenRequest, type TestHttpServer } from "@pes/local-services";
import type { ActionRequest } from "../connector.js";
import { resolveSecrets } from "../data-source-secrets.js";
import { runConnectorAction, type Observed } from "../run-action.js";
import { redactedObservation } from "../testing/redacted-observation.js";
import { createHttpClient } from "../undici-http-client.js";
import { httpRuntime } from "./runtime.js";
import { httpConnector } from "./definition.js";
import type { HttpAction, HttpDataSource } from "./schema.js";

// The http connector asks a JSON API and answers what it said; what the answer means (its field, a change
// at its time, an empty list) is the analysis' (json-reading.test.ts).

/** Runs an action as the worker does: templates filled with the connector's encodings, then its fetch. */
const runHttpAction = (request: ActionRequest<HttpDataSource, HttpAction>): Promise<Observed> =>
  runConnectorAction(httpConnector.definition, httpRuntime, request);

const window = {
  start: new Date("2026-11-20T13:08:00Z"),
  time: new Date("2026-11-20T14:08:00Z"),
  end: new Date("2026-11-20T14:23:00Z"),
};

/** The environment the data sources' secrets are resolved from, as the worker does at start. */
const env: Record<string, string> = {};
/** The data sources' HTTP client, as the worker builds one per data source at start. */
const http = createHttpClient();
afterAll(async () => {
  await http.close();
});

function request(
  dataSource: HttpDataSource,
  spec: Partial<HttpAction>,
  attributes: Record<string, string> = { service: "check out/../x?y#z" },
): ActionRequest<HttpDataSource, HttpAction> {
  return {
    title: "Last deploy",
    dataSource,
    secrets: resolveSecrets(dataSource, { env }).secrets,
    http,
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
    delete env.PES_TEST_HTTP_KEY;
  });

  it("GETs the path with each value as one URL component, sending configured headers", async () => {
    server = await startTestHttpServer((_request, response) => sendJson(response, 200, { version: "v1.2.3" }));
    env.PES_TEST_HTTP_KEY = "key-123456";
    const outcome = await runHttpAction(
      request({ type: "http", url: `${server.url}/api/`, headers: { "x-api-key": { env: "PES_TEST_HTTP_KEY" }, "x-team": "sre" } }, {}),
    );
    expect(outcome.observation).toEqual({ kind: "json", answer: { version: "v1.2.3" }, answerField: "version" });
    expect(outcome.link).toBe(`${server.url}/api/deploys/check%20out%2F..%2Fx%3Fy%23z`);
    expect(outcome.query).toEqual({ method: "GET", path: "/deploys/check%20out%2F..%2Fx%3Fy%23z", answerField: "version" });
    const seen = server.requests[0];
    expect(seen?.method).toBe("GET");
    expect(seen?.url).toBe("/api/deploys/check%20out%2F..%2Fx%3Fy%23z");
    expect(seen?.headers["x-api-key"]).toBe("key-123456");
    expect(seen?.headers["x-team"]).toBe("sre");
  });

  it("POSTs the body template with values as JSON strings that cannot break its structure", async () => {
    server = await startTestHttpServer((_request, response) => sendJson(response, 200, { data: { items: [{ state: { ok: true, n: 3 } }] } }));
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
    expect(outcome.observation).toEqual({ kind: "json", answer: { data: { items: [{ state: { ok: true, n: 3 } }] } }, answerField: "data.items.0.state" });
    expect(outcome.link).toBe(`https://status.example.com/services/${encodeURIComponent(hostile)}?from=dash`);
    const seen = server.requests[0];
    expect(seen?.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(seen?.body ?? "")).toEqual({ filter: { service: hostile, tags: [`svc:${hostile}`, 5] }, limit: 10 });
  });

  it("keeps long answers whole", async () => {
    server = await startTestHttpServer((_request, response) => sendJson(response, 200, { version: "x".repeat(1000) }));
    const outcome = await runHttpAction(request({ type: "http", url: server.url }, {}));
    expect(outcome.observation).toMatchObject({ kind: "json", answer: { version: "x".repeat(1000) } });
  });

  it("fails on an HTTP error without echoing the body or a header", async () => {
    env.PES_TEST_HTTP_KEY = "key-123456";
    server = await startTestHttpServer((seen, response) => sendJson(response, 500, { error: "boom", echo: seen.headers }));
    const outcome = await runHttpAction(request({ type: "http", url: server.url, headers: { authorization: { env: "PES_TEST_HTTP_KEY" } } }, {}));
    expect(outcome.observation).toEqual({ kind: "failed", reason: "the data source answered HTTP 500 Internal Server Error" });
    expect(outcome.link).toBe(`${server.url}/deploys/check%20out%2F..%2Fx%3Fy%23z`);
    expect(JSON.stringify(outcome)).not.toContain("key-123456");
  });

  it("redacts a secret header that an API echoes into the answer", async () => {
    env.PES_TEST_HTTP_KEY = "key-123456";
    server = await startTestHttpServer((seen, response) => sendJson(response, 200, { version: `seen ${String(seen.headers["x-api-key"])}` }));
    const outcome = await runHttpAction(request({ type: "http", url: server.url, headers: { "x-api-key": { env: "PES_TEST_HTTP_KEY" } } }, {}));
    expect(redactedObservation(outcome)).toMatchObject({ kind: "json", answer: { version: "seen [redacted]" } });
    expect(JSON.stringify(redactedObservation(outcome))).not.toContain("key-123456");
  });

  it("redacts a secret header echoed URL-encoded", async () => {
    env.PES_TEST_HTTP_KEY = "key/123 456";
    server = await startTestHttpServer((seen, response) =>
      sendJson(response, 200, {
        version: `seen ${encodeURIComponent(String(seen.headers["x-api-key"]))} and ${new URLSearchParams({ k: String(seen.headers["x-api-key"]) }).toString()}`,
      }),
    );
    const outcome = await runHttpAction(request({ type: "http", url: server.url, headers: { "x-api-key": { env: "PES_TEST_HTTP_KEY" } } }, {}));
    expect(redactedObservation(outcome)).toMatchObject({ answer: { version: "seen [redacted] and k=[redacted]" } });
  });

  it("fails when the answer is not JSON, and keeps a JSON answer whatever its fields", async () => {
    server = await startTestHttpServer((seen, response) => {
      if (seen.url.startsWith("/deploys/html")) {
        response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
        response.end("<html></html>");
      } else {
        sendJson(response, 200, { other: 1 });
      }
    });
    const html = await runHttpAction(request({ type: "http", url: server.url }, {}, { service: "html" }));
    expect(html.observation).toEqual({ kind: "failed", reason: "the data source answered with something that is not JSON (text/html)" });
    const other = await runHttpAction(request({ type: "http", url: server.url }, {}, { service: "json" }));
    expect(other.observation).toEqual({ kind: "json", answer: { other: 1 }, answerField: "version" });
  });

  it("refuses an answer too large to hold, instead of buffering it", async () => {
    const chunk = Buffer.alloc(1024 * 1024, "x");
    server = await startTestHttpServer((_request, response) => {
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
    expect(outcome.observation).toEqual({ kind: "failed", reason: expect.stringMatching(/larger than 32 MiB/) });
  });

  it("fails at its deadline when the API does not answer", async () => {
    server = await startTestHttpServer(() => {
      // held until the deadline
    });
    const outcome = await runHttpAction({ ...request({ type: "http", url: server.url }, {}), signal: AbortSignal.timeout(100) });
    expect(outcome.observation).toEqual({ kind: "failed", reason: "no answer from the data source before the deadline (timed out)" });
  });

  it("fails when nothing listens, and skips when attributes are missing", async () => {
    const port = await freePort();
    const refused = await runHttpAction(request({ type: "http", url: `http://127.0.0.1:${port}` }, {}));
    expect(refused.observation).toEqual({ kind: "failed", reason: "could not reach the data source (connection refused)" });
    const skipped = await runHttpAction(request({ type: "http", url: `http://127.0.0.1:${port}` }, {}, {}));
    expect(skipped.observation).toEqual({ kind: "skipped", missing: ["service"] });
    expect(skipped.query).toBeUndefined();
  });

  it("fails when a secret header's variable is unset, naming only the variable", async () => {
    server = await startTestHttpServer((_request, response) => sendJson(response, 200, { version: "v1" }));
    const outcome = await runHttpAction(request({ type: "http", url: server.url, headers: { "x-api-key": { env: "PES_TEST_HTTP_KEY" } } }, {}));
    expect(outcome.observation).toEqual({ kind: "failed", reason: "cannot build the request headers: environment variable PES_TEST_HTTP_KEY is not set" });
    expect(server.requests).toHaveLength(0);
  });
});

describe("runHttpAction with change", () => {
  let server: TestHttpServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  const deploy = { kind: "deploy", timeField: "deployedAt", subject: "{{service}}" } as const;
  const answering = async (body: unknown) => {
    server = await startTestHttpServer((_request, response) => sendJson(response, 200, body));
    return { type: "http", url: server.url } as const;
  };

  it("answers what the API said and where the change's time and subject are, what changed filled from the issue", async () => {
    const dataSource = await answering({ version: "v1.2.3", deployedAt: "2026-11-20T14:01:00Z" });
    const outcome = await runHttpAction(request(dataSource, { change: deploy }, { service: "checkout" }));
    expect(outcome.observation).toEqual({
      kind: "json",
      answer: { version: "v1.2.3", deployedAt: "2026-11-20T14:01:00Z" },
      answerField: "version",
      change: { kind: "deploy", timeField: "deployedAt", subject: "checkout" },
    });
    expect(outcome.link).toBe(`${server?.url}/deploys/checkout`);
  });

  it("skips the action when what changed needs an attribute the issue lacks", async () => {
    const dataSource = await answering({ version: "v1", deployedAt: "2026-11-20T14:01:00Z" });
    const outcome = await runHttpAction(request(dataSource, { change: { ...deploy, subject: "{{service}} in {{env}}" } }, { service: "checkout" }));
    expect(outcome.observation).toEqual({ kind: "skipped", missing: ["env"] });
    expect(server?.requests).toHaveLength(0);
  });
});

/** Every injection family, as whole attribute values; the dot segments are refused and listed apart. */
const HOSTILE_VALUES = [
  '"',
  "'",
  "`",
  '", "admin": true, "x": "',
  "{",
  "}",
  "}}",
  "{{x}}",
  "{{service}}",
  "|",
  "\\",
  "..\\..\\admin",
  "a\nb",
  "a\r\nX-Injected: 1",
  "a\u0000b",
  "...",
  ".hidden",
  "/",
  "../admin",
  "a/../../admin",
  "..%2Fadmin",
  "%2e%2e%2fadmin",
  "?",
  "?admin=1",
  "#",
  "#frag",
  "@",
  "user@evil.example",
  "//evil.example/x",
  "ünïcödé ✓ 😀 中文",
  "\u202Eevil",
  " ",
  "",
];
const DOT_SEGMENTS = [".", "..", "%2e%2e", "%2E", ".%2e", "%252e%252e", "．．"];

describe("runHttpAction with hostile attribute values", () => {
  let server: TestHttpServer;
  let dataSource: HttpDataSource;
  beforeAll(async () => {
    server = await startTestHttpServer((_request, response) => sendJson(response, 200, { version: "v1" }));
    dataSource = { type: "http", url: `${server.url}/api` };
  });
  afterAll(async () => {
    await server.close();
  });

  /** The requests the server received while `run` ran. */
  async function seenDuring(run: () => Promise<Observed>): Promise<{ outcome: Observed; seen: SeenRequest[] }> {
    const before = server.requests.length;
    const outcome = await run();
    return { outcome, seen: server.requests.slice(before) };
  }

  it.each(HOSTILE_VALUES)("%j: one path segment under the base path, no query or fragment of its own", async (value) => {
    const { outcome, seen } = await seenDuring(() =>
      runHttpAction(request(dataSource, { path: "/deploys/{{service}}/status?from=playbook" }, { service: value })),
    );
    expect(outcome.observation.kind).toBe("json");
    expect(seen).toHaveLength(1);
    const url = new URL(seen[0]?.url ?? "", server.url);
    expect(url.pathname.split("/").map(decodeURIComponent)).toEqual(["", "api", "deploys", value, "status"]);
    expect([...url.searchParams]).toEqual([["from", "playbook"]]);
    expect(url.hash).toBe("");
  });

  it.each(DOT_SEGMENTS)("%j: refused, failed with the reason, nothing requested", async (value) => {
    const { outcome, seen } = await seenDuring(() => runHttpAction(request(dataSource, { path: "/{{service}}/status" }, { service: value })));
    expect(outcome.observation).toEqual({
      kind: "failed",
      reason: `could not build the request: attribute service is ${JSON.stringify(value)}, a dot segment, which would move the URL to another path`,
    });
    expect(seen).toHaveLength(0);
  });

  it("refuses a path whose literal text leaves the data source's path", async () => {
    const { outcome, seen } = await seenDuring(() => runHttpAction(request(dataSource, { path: "/{{service}}/../../status" }, { service: "x" })));
    expect(outcome.observation).toEqual({ kind: "failed", reason: "could not build the request: the URL would leave the base path /api" });
    expect(seen).toHaveLength(0);
  });

  it.each(HOSTILE_VALUES)("%j: one string of a body that keeps its structure", async (value) => {
    const { outcome, seen } = await seenDuring(() =>
      runHttpAction(
        request(
          dataSource,
          { method: "POST", path: "/search", body: { filter: { service: "{{service}}", tags: ["svc:{{service}}", 5] }, limit: 10 } },
          { service: value },
        ),
      ),
    );
    expect(outcome.observation.kind).toBe("json");
    expect(seen[0]?.url).toBe("/api/search");
    expect(JSON.parse(seen[0]?.body ?? "")).toEqual({ filter: { service: value, tags: [`svc:${value}`, 5] }, limit: 10 });
  });

  it.each(HOSTILE_VALUES)("%j: one component of the link, at the link's origin and path", async (value) => {
    const outcome = await runHttpAction(
      request(dataSource, { path: "/deploys", link: "https://status.example.com/services/{{service}}/deploys?from=dash#{{service}}" }, { service: value }),
    );
    expect(outcome.observation.kind).toBe("json");
    const url = new URL(outcome.link ?? "");
    expect(url.origin).toBe("https://status.example.com");
    expect(url.pathname.split("/").map(decodeURIComponent)).toEqual(["", "services", value, "deploys"]);
    expect([...url.searchParams]).toEqual([["from", "dash"]]);
    expect(decodeURIComponent(url.hash.slice(1))).toBe(value);
  });

  it.each(DOT_SEGMENTS)("%j in the link: refused, nothing requested", async (value) => {
    const { outcome, seen } = await seenDuring(() =>
      runHttpAction(request(dataSource, { path: "/deploys", link: "https://status.example.com/services/{{service}}/x" }, { service: value })),
    );
    expect(outcome.observation).toEqual({ kind: "failed", reason: expect.stringContaining("a dot segment") });
    expect(seen).toHaveLength(0);
  });
});
