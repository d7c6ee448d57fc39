// The loki connector against a fake Loki speaking its HTTP API (LogQL parsed by Loki's own grammar rules
// for selectors and line filters), and against a local server where a failure must be seen exactly. What
// the lines and counts say (a new pattern, a rate within its usual range) is the analysis'
// (log-analysis.test.ts; test/connectors for the whole way to the words).
import type { Observation } from "@pes/contracts";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  freePort,
  lokiQueriesOf,
  startFakeLoki,
  startTestHttpServer,
  type FakeLoki,
  type FakeLokiStream,
  type SeenRequest,
  type TestHttpServer,
} from "@pes/local-services";
import type { ActionRequest, TimeWindow } from "../connector.js";
import { resolveSecrets } from "../data-source-secrets.js";
import { runConnectorAction, type Observed } from "../run-action.js";
import { redactedObservation } from "../testing/redacted-observation.js";
import { createHttpClient } from "../undici-http-client.js";
import { lokiRuntime } from "./runtime.js";
import { lokiConnector } from "./definition.js";
import type { LokiAction, LokiDataSource } from "./schema.js";

/** Runs an action as the worker does: the selector filled with LogQL string literals, then the fetch. */
const runLokiAction = (request: ActionRequest<LokiDataSource, LokiAction>): Promise<Observed> =>
  runConnectorAction(lokiConnector.definition, lokiRuntime, request);

// A fixed past incident: checkout cannot reach its database from 14:05 UTC.
const ONSET = Date.parse("2026-11-20T14:05:00Z");
const window: TimeWindow = {
  start: new Date("2026-11-20T13:08:00Z"),
  time: new Date("2026-11-20T14:08:00Z"),
  end: new Date("2026-11-20T14:23:00Z"),
};
const NS = (ms: number) => `${ms}000000`;

/** The environment the data sources' secrets are resolved from, as the worker does at start. */
const env: Record<string, string> = {};
const http = createHttpClient();
afterAll(async () => {
  await http.close();
});

/** Lines every `everyMs` over the window (from `from`), each made by `line(index)`. */
function entries(everyMs: number, line: (index: number) => string, from = window.start.getTime()): FakeLokiStream["entries"] {
  const made = [];
  for (let at = from, index = 0; at <= window.end.getTime(); at += everyMs, index += 1) made.push({ at, line: line(index) });
  return made;
}

/**
 * Checkout's and search's logs: requests and a periodic warning throughout (noise, errors included), and
 * from 14:05 checkout's "connection refused" errors. Search logs the very same error all along: a query
 * that is not scoped to checkout would see it.
 */
const streams: FakeLokiStream[] = [
  { labels: { app: "checkout", env: "prod" }, entries: entries(2_000, (i) => `level=info msg="GET /api/cart" status=200 duration=${(i * 37) % 300}ms`) },
  { labels: { app: "checkout", env: "prod" }, entries: entries(180_000, (i) => `level=error msg="payment retry" attempt=${i % 3} error="timeout after 2s"`) },
  {
    labels: { app: "checkout", env: "prod" },
    entries: entries(4_000, (i) => `level=error msg="query failed" error="dial tcp 10.0.3.${7 + (i % 2)}:5432: connect: connection refused"`, ONSET + 1_000),
  },
  {
    labels: { app: "search", env: "prod" },
    entries: entries(3_000, () => `level=error msg="query failed" error="dial tcp 10.0.9.1:5432: connect: connection refused"`),
  },
];

/** The requests of one action (sent in parallel, so seen in any order): the count query first, then by start. */
function inOrder(requests: readonly SeenRequest[]): SeenRequest[] {
  const key = (seen: SeenRequest) => {
    const parameters = new URL(seen.url, "http://loki.invalid").searchParams;
    return `${parameters.has("step") ? 0 : 1} ${parameters.get("start") ?? ""}`;
  };
  return [...requests].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/** How many lines the counts say matched in all, and every line the log queries answered. */
function seen(observation: Observation): { total: number; lines: string[]; labels: Array<Record<string, string> | undefined> } {
  if (observation.kind !== "logs") return { total: -1, lines: [observation.kind], labels: [] };
  return {
    total: observation.counts.reduce((sum, { count }) => sum + count, 0),
    lines: observation.streams.flatMap(({ lines }) => lines.map(({ line }) => line)),
    labels: observation.streams.map(({ labels }) => labels),
  };
}

function request(
  dataSource: LokiDataSource,
  spec: Partial<LokiAction> = {},
  overrides: Partial<ActionRequest<LokiDataSource, LokiAction>> = {},
): ActionRequest<LokiDataSource, LokiAction> {
  return {
    title: "Error logs of checkout",
    dataSource,
    secrets: resolveSecrets(dataSource, { env }).secrets,
    http,
    spec: { selector: '{app={{service}}, env="prod"} |= "level=error"', limit: 1000, ...spec },
    attributes: { service: "checkout" },
    window,
    signal: AbortSignal.timeout(10_000),
    ...overrides,
  };
}

describe("runLokiAction against a fake Loki", () => {
  let loki: FakeLoki;
  beforeAll(async () => {
    loki = await startFakeLoki({ streams, tenant: "acme" });
  });
  afterAll(async () => {
    await loki?.close();
  });
  afterEach(() => {
    delete env.PES_TEST_LOKI_TOKEN;
  });

  it("asks the counts over the window and the latest lines of each phase, with the tenant and the token, linked to Explore", async () => {
    env.PES_TEST_LOKI_TOKEN = "s3cret-loki-token";
    const before = loki.requests.length;
    const dataSource: LokiDataSource = {
      type: "loki",
      url: `${loki.url}/`,
      tenant: "acme",
      auth: { bearerToken: { env: "PES_TEST_LOKI_TOKEN" } },
      grafana: { url: "https://grafana.example/", datasourceUid: "loki-uid", orgId: 2 },
    };
    const observed = await runLokiAction(request(dataSource));
    // checkout's error lines only: the payment retries all along, the refused connections from 14:05.
    const inWindow = streams
      .filter(({ labels }) => labels.app === "checkout")
      .flatMap(({ entries: made }) => made.map(({ at, line }) => ({ at: Number(at), line })))
      .filter(({ at, line }) => line.includes("level=error") && at >= window.start.getTime() && at <= window.end.getTime());
    const { total, lines, labels } = seen(observed.observation);
    // A count is of the minute that ends at it: a line at the window's very start is in the lines, not the counts.
    expect(total).toBe(inWindow.filter(({ at }) => at > window.start.getTime()).length);
    expect(new Set(lines)).toEqual(new Set(inWindow.map(({ line }) => line)));
    expect(new Set(labels.map((item) => JSON.stringify(item)))).toEqual(new Set([JSON.stringify({ app: "checkout", env: "prod" })]));

    // Three GETs, in parallel: the counts over the window, then the latest lines before and from the incident phase.
    const sent = inOrder(loki.requests.slice(before));
    expect(sent.map((item) => item.method)).toEqual(["GET", "GET", "GET"]);
    expect(sent.map((item) => item.headers["x-scope-orgid"])).toEqual(["acme", "acme", "acme"]);
    expect(sent.map((item) => item.headers.authorization)).toEqual(Array(3).fill("Bearer s3cret-loki-token"));
    expect(lokiQueriesOf(sent)).toEqual([
      'sum(count_over_time({app="checkout", env="prod"} |= "level=error"[60s]))',
      '{app="checkout", env="prod"} |= "level=error"',
      '{app="checkout", env="prod"} |= "level=error"',
    ]);
    const parameters = sent.map((item) => Object.fromEntries(new URL(item.url, loki.url).searchParams));
    // Each count is of the minute that ends at its time: from the window's first minute to past its end.
    expect(parameters[0]).toEqual({
      query: expect.any(String),
      start: NS(window.start.getTime() + 60_000),
      end: NS(window.end.getTime() + 60_000),
      step: "60",
    });
    // The incident phase starts 5 minutes before the issue time; Loki's end is exclusive, the window's is not.
    const split = window.time.getTime() - 5 * 60_000;
    expect(parameters[1]).toEqual({ query: expect.any(String), start: NS(window.start.getTime()), end: NS(split), limit: "1000", direction: "backward" });
    expect(parameters[2]).toEqual({ query: expect.any(String), start: NS(split), end: `${window.end.getTime()}999999`, limit: "1000", direction: "backward" });

    const link = new URL(observed.link ?? "");
    expect(`${link.origin}${link.pathname}`).toBe("https://grafana.example/explore");
    expect(link.searchParams.get("orgId")).toBe("2");
    expect(JSON.parse(link.searchParams.get("panes") ?? "")).toEqual({
      a: {
        datasource: "loki-uid",
        queries: [
          {
            refId: "A",
            datasource: { type: "loki", uid: "loki-uid" },
            expr: '{app="checkout", env="prod"} |= "level=error"',
            queryType: "range",
            editorMode: "code",
          },
        ],
        range: { from: String(window.start.getTime()), to: String(window.end.getTime()) },
      },
    });
  });

  it("has no link without Grafana, and reads no line and no count when nothing matches", async () => {
    const observed = await runLokiAction(request({ type: "loki", url: loki.url, tenant: "acme" }, {}, { attributes: { service: "cart" } }));
    expect(observed.observation).toEqual({ kind: "logs", streams: [], counts: [] });
    expect(observed.link).toBeUndefined();
  });

  it("fails with Loki's own words on a query it cannot parse", async () => {
    const observed = await runLokiAction(request({ type: "loki", url: loki.url, tenant: "acme" }, { selector: "{app={{service}}} |= error" }));
    expect(observed.observation).toEqual({
      kind: "failed",
      reason: expect.stringMatching(/^Loki answered 400: parse error at line 1, col \d+: syntax error: /),
    });
  });

  it("fails with Loki's answer to a missing tenant", async () => {
    expect((await runLokiAction(request({ type: "loki", url: loki.url }))).observation).toEqual({ kind: "failed", reason: "Loki answered 401: no org id" });
  });

  describe("with hostile attribute values", () => {
    const hostile = [
      '"} or vector(1) #',
      '"',
      "'",
      "`",
      "{",
      "}",
      "}}",
      "{{x}}",
      "{{service}}",
      "|",
      '|= "x"',
      "\\",
      'a\\"b',
      "\\x41",
      "a\nb",
      "a\rb",
      "a\u0000b",
      "..",
      ".",
      "*",
      ".*",
      "%2e%2e",
      "/",
      "?",
      "#",
      "# comment",
      "ünïcödé ✓ 😀 中文",
      ")",
      "[5m]",
    ];

    it.each(hostile)("%j selects its stream and its lines exactly, never more", async (value) => {
      // A stream labelled with the value whose lines hold it, among streams with near-misses.
      const onlyThis = await startFakeLoki({
        streams: [
          { labels: { app: value, env: "prod" }, entries: entries(20_000, (i) => `found ${value} #${i}`, ONSET) },
          { labels: { app: `${value}x`, env: "prod" }, entries: entries(5_000, () => `found ${value} elsewhere`, ONSET) },
          { labels: { app: "checkout", env: "prod" }, entries: entries(5_000, () => `found ${value} in checkout`, ONSET) },
        ],
      });
      try {
        const observed = await runLokiAction(
          request(
            { type: "loki", url: onlyThis.url },
            { selector: '{app={{service}}, env="prod"} |= {{needle}}' },
            { attributes: { service: value, needle: value } },
          ),
        );
        // The query is the template with each value as one Go string literal, exactly.
        const literal = JSON.stringify(value);
        expect(lokiQueriesOf(inOrder(onlyThis.requests))).toEqual([
          `sum(count_over_time({app=${literal}, env="prod"} |= ${literal}[60s]))`,
          `{app=${literal}, env="prod"} |= ${literal}`,
          `{app=${literal}, env="prod"} |= ${literal}`,
        ]);
        // …and Loki reads it as such: only the stream labelled with the value, every line of it.
        const { total, lines, labels } = seen(observed.observation);
        expect(total).toBe(55);
        expect(lines).toHaveLength(55);
        expect(lines.every((line) => line.startsWith(`found ${value} #`))).toBe(true);
        expect(new Set(labels.map((item) => JSON.stringify(item)))).toEqual(new Set([JSON.stringify({ app: value, env: "prod" })]));
      } finally {
        await onlyThis.close();
      }
    });

    it.each(hostile)("%j stays literal in a |regex matcher", async (value) => {
      const recorder = await startFakeLoki({
        streams: [
          { labels: { app: value }, entries: entries(20_000, () => "hit", ONSET) },
          { labels: { app: `${value}${value}` }, entries: entries(5_000, () => "miss", ONSET) },
        ],
      });
      try {
        const observed = await runLokiAction(
          request({ type: "loki", url: recorder.url }, { selector: "{app=~{{service|regex}}}" }, { attributes: { service: value } }),
        );
        expect(new Set(seen(observed.observation).lines)).toEqual(new Set(["hit"]));
      } finally {
        await recorder.close();
      }
    });

    it("refuses a placeholder inside the author's quotes, sending nothing", async () => {
      const before = loki.requests.length;
      const observed = await runLokiAction(
        request({ type: "loki", url: loki.url }, { selector: '{app="{{service}}"}' }, { attributes: { service: "} or vector(1) #" } }),
      );
      expect(observed.observation).toEqual({
        kind: "failed",
        reason:
          "could not build the query: placeholder {{service}} is inside a string literal: write it without quotes (each value becomes a string literal of its own)",
      });
      expect(loki.requests).toHaveLength(before);
    });

    it("refuses a value that is not valid Unicode, sending nothing", async () => {
      const before = loki.requests.length;
      const observed = await runLokiAction(request({ type: "loki", url: loki.url }, {}, { attributes: { service: "a\uD800b" } }));
      expect(observed.observation).toEqual({ kind: "failed", reason: expect.stringContaining("not valid Unicode") });
      expect(loki.requests).toHaveLength(before);
    });
  });
});

describe("runLokiAction on the wire", () => {
  let server: TestHttpServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
    delete env.PES_TEST_LOKI_TOKEN;
  });

  it("sends basic auth", async () => {
    server = await startTestHttpServer((seen, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ status: "success", data: { resultType: seen.url.includes("count_over_time") ? "matrix" : "streams", result: [] } }));
    });
    env.PES_TEST_LOKI_TOKEN = "pa:ss";
    const observed = await runLokiAction(
      request({ type: "loki", url: server.url, auth: { basic: { username: "reader", password: { env: "PES_TEST_LOKI_TOKEN" } } } }),
    );
    expect(observed.observation).toEqual({ kind: "logs", streams: [], counts: [] });
    expect(server.requests.map((item) => item.headers.authorization)).toEqual(Array(3).fill(`Basic ${Buffer.from("reader:pa:ss").toString("base64")}`));
    expect(server.requests.every((item) => item.headers["x-scope-orgid"] === undefined)).toBe(true);
  });

  it.each([
    [
      "a plain-text error",
      400,
      "text/plain",
      "parse error at line 1, col 12: syntax error: unexpected IDENTIFIER\n",
      "Loki answered 400: parse error at line 1, col 12: syntax error: unexpected IDENTIFIER",
    ],
    [
      "a JSON error from a gateway",
      400,
      "application/json",
      JSON.stringify({ status: "error", errorType: "bad_data", error: 'invalid parameter "limit"' }),
      'Loki answered 400: invalid parameter "limit"',
    ],
    ["an empty error", 502, "text/plain", "", "Loki answered HTTP 502 Bad Gateway"],
    ["a success that is not JSON", 200, "text/html", "<html>login</html>", "Loki answered with something that is not JSON"],
    [
      "a success in another shape",
      200,
      "application/json",
      JSON.stringify({ status: "success", data: { resultType: "vector", result: [] } }),
      "Loki answered the count query in a shape this connector does not know",
    ],
  ])("fails on %s, in plain words", async (_case, status, contentType, body, expected) => {
    server = await startTestHttpServer((_request, response) => {
      response.writeHead(status, { "content-type": contentType });
      response.end(body);
    });
    const observed = await runLokiAction(request({ type: "loki", url: server.url, grafana: { url: "https://grafana.example", datasourceUid: "l", orgId: 1 } }));
    expect(observed.observation).toEqual({ kind: "failed", reason: expected });
    expect(observed.link).toMatch(/^https:\/\/grafana\.example\/explore\?/);
  });

  it("fails with 'timed out' when the deadline passes before Loki answers", async () => {
    server = await startTestHttpServer(() => {
      // never answers: the action's deadline must end it
    });
    const observed = await runLokiAction(request({ type: "loki", url: server.url }, {}, { signal: AbortSignal.timeout(100) }));
    expect(observed.observation).toEqual({ kind: "failed", reason: "no answer from Loki before the deadline (timed out)" });
  });

  it("fails with 'connection refused' when nothing listens", async () => {
    const port = await freePort();
    const observed = await runLokiAction(request({ type: "loki", url: `http://127.0.0.1:${port}` }));
    expect(observed.observation).toEqual({ kind: "failed", reason: "could not reach Loki (connection refused)" });
  });

  it("redacts a token that an error answer or a log line echoes", async () => {
    env.PES_TEST_LOKI_TOKEN = "s3cret-loki-token";
    server = await startTestHttpServer((seen, response) => {
      response.writeHead(403, { "content-type": "text/plain" });
      response.end(`forbidden: ${String(seen.headers.authorization)}`);
    });
    const failed = redactedObservation(await runLokiAction(request({ type: "loki", url: server.url, auth: { bearerToken: { env: "PES_TEST_LOKI_TOKEN" } } })));
    expect(failed).toEqual({ kind: "failed", reason: "Loki answered 403: forbidden: Bearer [redacted]" });

    // A log line that holds the token (an access log of the proxy in front of Loki, say).
    const echoing = await startFakeLoki({
      streams: [
        { labels: { app: "checkout", env: "prod" }, entries: entries(10_000, (i) => `level=error auth failed for Bearer s3cret-loki-token #${i}`, ONSET) },
      ],
    });
    try {
      const observed = redactedObservation(
        await runLokiAction(request({ type: "loki", url: echoing.url, auth: { bearerToken: { env: "PES_TEST_LOKI_TOKEN" } } })),
      );
      expect(JSON.stringify(observed)).not.toContain("s3cret-loki-token");
      expect(seen(observed).lines).toContain("level=error auth failed for Bearer [redacted] #0");
    } finally {
      await echoing.close();
    }
  });
});
