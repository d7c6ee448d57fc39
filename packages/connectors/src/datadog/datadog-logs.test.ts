// The datadog connector's log searches against a local server speaking Datadog's logs APIs as documented.
// What the lines and counts say is the analysis' (log-analysis.test.ts; test/connectors for the words).
import type { Observation } from "@pes/contracts";
import { sendJson, startTestHttpServer, type SeenRequest, type TestHttpHandler, type TestHttpServer } from "@pes/local-services";
import fc from "fast-check";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { ActionRequest, TimeWindow } from "../connector.js";
import { resolveSecrets } from "../data-source-secrets.js";
import { runConnectorAction, type Observed } from "../run-action.js";
import { createHttpClient } from "../undici-http-client.js";
import { datadogRuntime } from "./runtime.js";
import { datadogConnector } from "./definition.js";
import { DatadogAction, type DatadogDataSource } from "./schema.js";

/** Runs an action as the worker does: the search filled (each value one quoted term), then the fetch. */
const runDatadogAction = (request: ActionRequest<DatadogDataSource, DatadogAction>): Promise<Observed> =>
  runConnectorAction(datadogConnector.definition, datadogRuntime, request);

// A fixed past incident: checkout cannot reach its database from 14:05 UTC.
const ONSET = Date.parse("2026-11-20T14:05:00Z");
const window: TimeWindow = {
  start: new Date("2026-11-20T13:08:00Z"),
  time: new Date("2026-11-20T14:08:00Z"),
  end: new Date("2026-11-20T14:23:00Z"),
};
/** The incident phase starts 5 minutes before the issue time. */
const SPLIT = window.time.getTime() - 5 * 60_000;

/** How many lines the counts say matched in all, and every line the searches answered. */
function seen(observation: Observation): { total: number; lines: string[] } {
  if (observation.kind !== "logs") return { total: -1, lines: [observation.kind] };
  return {
    total: observation.counts.reduce((sum, { count }) => sum + count, 0),
    lines: observation.streams.flatMap(({ lines }) => lines.map(({ line }) => line)),
  };
}

interface FakeLog {
  at: number;
  message: string;
}

/** Lines every `everyMs` over the window (from `from`), each made by `line(index)`. */
function logs(everyMs: number, line: (index: number) => string, from = window.start.getTime()): FakeLog[] {
  const made: FakeLog[] = [];
  for (let at = from, index = 0; at <= window.end.getTime(); at += everyMs, index += 1) made.push({ at, message: line(index) });
  return made;
}

/** Checkout's error logs: a periodic retry all along (noise), and from 14:05 "connection refused". */
const INCIDENT = [
  ...logs(180_000, (i) => `payment retry attempt=${i % 3} error="timeout after 2s"`),
  ...logs(4_000, (i) => `query failed: dial tcp 10.0.3.${7 + (i % 2)}:5432: connect: connection refused`, ONSET + 1_000),
];

/**
 * Datadog's logs APIs as documented, over a fixed list of logs that all match (the query is checked on
 * the requests, not interpreted): `events/search` filters on `from`/`to` (epoch ms, `to` exclusive),
 * sorts by `sort`, and pages with `page.limit` and the `meta.page.after` cursor; `analytics/aggregate`
 * answers a `count` timeseries as one bucket `c0` of `{time, value}` points, no bucket when nothing matched.
 */
function fakeDatadog(all: readonly FakeLog[]): TestHttpHandler {
  return (seen, response) => {
    const path = new URL(seen.url, "http://datadog.invalid").pathname;
    const body = JSON.parse(seen.body) as {
      filter: { from: string; to: string };
      sort?: string;
      page?: { limit: number; cursor?: string };
      compute?: Array<{ interval: string }>;
    };
    const inRange = all.filter((log) => log.at >= Number(body.filter.from) && log.at < Number(body.filter.to));
    const meta = { elapsed: 12, request_id: "pddv1ChZ", status: "done" };
    if (path === "/api/v2/logs/analytics/aggregate") {
      const interval = Number.parseInt(body.compute?.[0]?.interval ?? "", 10) * 60_000;
      const counts = new Map<number, number>();
      for (const log of inRange) counts.set(log.at - (log.at % interval), (counts.get(log.at - (log.at % interval)) ?? 0) + 1);
      const points = [...counts].sort(([a], [b]) => a - b).map(([at, value]) => ({ time: new Date(at).toISOString(), value }));
      sendJson(response, 200, { data: { buckets: points.length === 0 ? [] : [{ by: {}, computes: { c0: points } }] }, meta });
      return;
    }
    if (path === "/api/v2/logs/events/search") {
      const sorted = [...inRange].sort((a, b) => (body.sort === "-timestamp" ? b.at - a.at : a.at - b.at));
      const offset = body.page?.cursor === undefined ? 0 : Number(Buffer.from(body.page.cursor, "base64url").toString());
      const limit = body.page?.limit ?? 10;
      const page = sorted.slice(offset, offset + limit);
      const after = offset + limit < sorted.length ? Buffer.from(String(offset + limit)).toString("base64url") : undefined;
      sendJson(response, 200, {
        data: page.map((log, index) => ({
          id: `AQAAAY${offset + index}`,
          type: "log",
          attributes: {
            attributes: { error: { kind: "db" } },
            host: "web-1",
            message: log.message,
            service: "checkout",
            status: "error",
            tags: ["env:prod", "service:checkout"],
            timestamp: new Date(log.at).toISOString(),
          },
        })),
        ...(after === undefined ? {} : { links: { next: `https://api.datadoghq.com/api/v2/logs/events?page[cursor]=${after}` } }),
        meta: { ...meta, ...(after === undefined ? {} : { page: { after } }) },
      });
      return;
    }
    sendJson(response, 404, { errors: ["Not found"] });
  };
}

/** The environment the keys are resolved from, as the worker does at start. */
const env: Record<string, string> = { PES_TEST_DD_API_KEY: "dd-api-s3cret-0123", PES_TEST_DD_APP_KEY: "dd-app-s3cret-4567" };
const http = createHttpClient();
afterAll(async () => {
  await http.close();
});

function dataSourceAt(url: string): DatadogDataSource {
  return { type: "datadog", url, appUrl: "https://app.datadoghq.eu", apiKey: { env: "PES_TEST_DD_API_KEY" }, appKey: { env: "PES_TEST_DD_APP_KEY" } };
}

const ERRORS = { logs: "service:{{service}} status:error", limit: 1000 };

function request(
  url: string,
  spec: DatadogAction = ERRORS,
  overrides: Partial<ActionRequest<DatadogDataSource, DatadogAction>> = {},
): ActionRequest<DatadogDataSource, DatadogAction> {
  const dataSource = dataSourceAt(url);
  return {
    title: "Checkout error logs",
    dataSource,
    secrets: resolveSecrets(dataSource, { env }).secrets,
    http,
    spec,
    attributes: { service: "checkout" },
    window,
    signal: AbortSignal.timeout(10_000),
    ...overrides,
  };
}

/** The requests of one action (sent in parallel, so seen in any order): the count first, then by `from`. */
function inOrder(requests: readonly SeenRequest[]): Array<{ path: string; body: unknown }> {
  const parsed = requests.map((seen) => ({
    path: new URL(seen.url, "http://datadog.invalid").pathname,
    body: JSON.parse(seen.body) as { filter: { from: string } },
  }));
  const key = (item: (typeof parsed)[number]) => `${item.path.endsWith("aggregate") ? 0 : 1} ${item.body.filter.from} ${JSON.stringify(item.body)}`;
  return parsed.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

describe("runDatadogAction: logs", () => {
  let server: TestHttpServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it("asks the counts and the latest lines of each phase with the documented requests, linked to the Log Explorer", async () => {
    server = await startTestHttpServer(fakeDatadog(INCIDENT));
    const observed = await runDatadogAction(request(server.url));
    const inWindow = INCIDENT.filter(({ at }) => at >= window.start.getTime() && at < window.end.getTime());
    expect(seen(observed.observation)).toEqual({ total: inWindow.length, lines: expect.arrayContaining([inWindow.at(-1)?.message]) });
    expect(seen(observed.observation).lines).toHaveLength(inWindow.length);

    // Three POSTs, in parallel, with both keys: the counts over the window, the latest lines before and from the incident phase.
    expect(server.requests.map((seen) => [seen.method, seen.headers["dd-api-key"], seen.headers["dd-application-key"], seen.headers["content-type"]])).toEqual(
      Array(3).fill(["POST", "dd-api-s3cret-0123", "dd-app-s3cret-4567", "application/json"]),
    );
    const query = 'service:"checkout" status:error';
    const ms = (date: Date | number) => String(typeof date === "number" ? date : date.getTime());
    expect(inOrder(server.requests)).toEqual([
      {
        path: "/api/v2/logs/analytics/aggregate",
        body: { compute: [{ aggregation: "count", type: "timeseries", interval: "1m" }], filter: { query, from: ms(window.start), to: ms(window.end) } },
      },
      { path: "/api/v2/logs/events/search", body: { filter: { query, from: ms(window.start), to: ms(SPLIT) }, sort: "-timestamp", page: { limit: 1000 } } },
      { path: "/api/v2/logs/events/search", body: { filter: { query, from: ms(SPLIT), to: ms(window.end) }, sort: "-timestamp", page: { limit: 1000 } } },
    ]);

    const link = new URL(observed.link ?? "");
    expect(`${link.origin}${link.pathname}`).toBe("https://app.datadoghq.eu/logs");
    expect(Object.fromEntries(link.searchParams)).toEqual({ query, from_ts: ms(window.start), to_ts: ms(window.end), live: "false" });
  });

  it("reads at most `limit` lines of a phase, page after page with the cursor, and counts them all", async () => {
    // A line a second all along: 3,300 in the baseline phase, more than the 1,500 read.
    server = await startTestHttpServer(fakeDatadog(logs(1_000, (i) => `slow query took ${i % 90}ms on shard ${i % 4}`)));
    const observed = await runDatadogAction(request(server.url, { logs: "service:{{service}}", limit: 1500 }));
    const searches = inOrder(server.requests).filter((item) => item.path.endsWith("search"));
    const before = searches.filter((item) => (item.body as { filter: { from: string } }).filter.from === String(window.start.getTime()));
    expect(before.map((item) => (item.body as { page: unknown }).page)).toEqual([
      { limit: 1000 },
      { limit: 500, cursor: Buffer.from("1000").toString("base64url") },
    ]);
    const { total, lines } = seen(observed.observation);
    expect(total).toBe(75 * 60);
    // 1,500 of the 3,300 before the incident phase, and all 1,200 of it.
    expect(lines).toHaveLength(1500 + 1200);
  });

  it("reads no line and no count when nothing matched: not 'failed'", async () => {
    server = await startTestHttpServer(fakeDatadog([]));
    const observed = await runDatadogAction(request(server.url));
    expect(observed.observation).toEqual({ kind: "logs", streams: [{ lines: [] }], counts: [] });
    expect(observed.link).toContain("https://app.datadoghq.eu/logs?");
  });

  it.each([
    [400, { errors: ["Invalid query: unexpected token ')' at position 12"] }, "Datadog answered 400: Invalid query: unexpected token ')' at position 12"],
    [403, { errors: ["Forbidden"] }, "Datadog answered 403: Forbidden"],
  ])("fails on Datadog's error answer %i, in its words and with the link", async (status, body, expected) => {
    server = await startTestHttpServer((_seen, response) => sendJson(response, status, body));
    const observed = await runDatadogAction(request(server.url));
    expect(observed.observation).toEqual({ kind: "failed", reason: expected });
    expect(observed.link).toContain("/logs?");
  });

  it("fails when Datadog could not finish (status timeout): partial counts would read as a drop", async () => {
    const fake = fakeDatadog(INCIDENT);
    server = await startTestHttpServer((seen, response) => {
      if (!seen.url.endsWith("aggregate")) return fake(seen, response);
      sendJson(response, 200, {
        data: { buckets: [] },
        meta: { status: "timeout", warnings: [{ code: "timeout", message: "The query timed out on some indexes", title: "Partial results" }] },
      });
    });
    const observed = await runDatadogAction(request(server.url));
    expect(observed.observation).toEqual({ kind: "failed", reason: "Datadog could not finish counting the lines: The query timed out on some indexes" });
  });

  it("fails with 'timed out' when the deadline passes before Datadog answers", async () => {
    server = await startTestHttpServer(() => {
      // never answers: the action's deadline must end it
    });
    const observed = await runDatadogAction(request(server.url, ERRORS, { signal: AbortSignal.timeout(100) }));
    expect(observed.observation).toEqual({ kind: "failed", reason: "no answer from Datadog before the deadline (timed out)" });
    expect(observed.link).toContain("/logs?");
  });

  it("sends a search again after a 429 (both APIs only read), and reads the answers that follow", async () => {
    const fake = fakeDatadog(INCIDENT);
    const limited = new Set<string>();
    server = await startTestHttpServer((seen, response) => {
      // Each distinct request is rate limited once.
      if (limited.has(seen.body)) return fake(seen, response);
      limited.add(seen.body);
      response.writeHead(429, { "content-type": "application/json", "retry-after": "0" });
      response.end(JSON.stringify({ errors: ["Rate limit exceeded"] }));
    });
    const observed = await runDatadogAction(request(server.url));
    expect(seen(observed.observation).total).toBe(INCIDENT.filter(({ at }) => at >= window.start.getTime() && at < window.end.getTime()).length);
    expect(server.requests).toHaveLength(6);
  });

  it("refuses at fill a placeholder written inside quotes, sending nothing", async () => {
    server = await startTestHttpServer(fakeDatadog(INCIDENT));
    const observed = await runDatadogAction(request(server.url, { logs: 'service:"{{service}}"', limit: 1000 }));
    expect(observed.observation).toEqual({
      kind: "failed",
      reason:
        "could not build the query: placeholder {{service}} is inside a string literal: write it without quotes (each value becomes a string literal of its own)",
    });
    expect(server.requests).toHaveLength(0);
  });

  it("takes a metric query or a log search, never both", () => {
    expect(DatadogAction.safeParse({ logs: "service:x" }).data).toEqual({ logs: "service:x", limit: 1000 });
    expect(DatadogAction.safeParse({ metrics: "avg:x{*}", logs: "service:x" }).success).toBe(false);
    expect(DatadogAction.safeParse({ logs: "service:x", unit: "s" }).success).toBe(false);
    expect(DatadogAction.safeParse({ logs: "service:x", limit: 5001 }).success).toBe(false);
  });
});

/**
 * The terms of a log search as Datadog's syntax reads them: split at spaces outside double quotes, where
 * a backslash escapes the next character. Each term is its text, its sequences unescaped.
 */
function searchTerms(query: string): string[] {
  const terms: string[] = [];
  let term = "";
  let quoted = false;
  for (let index = 0; index < query.length; index += 1) {
    const char = query[index] ?? "";
    if (quoted && char === "\\") {
      index += 1;
      term += query[index] ?? "";
    } else if (char === '"') {
      quoted = !quoted;
    } else if (char === " " && !quoted) {
      if (term !== "") terms.push(term);
      term = "";
    } else {
      term += char;
    }
  }
  if (quoted) throw new Error(`unterminated sequence in ${query}`);
  if (term !== "") terms.push(term);
  return terms;
}

describe("runDatadogAction: hostile attribute values in a log search", () => {
  let server: TestHttpServer;
  afterAll(async () => {
    await server?.close();
  });

  /** Runs the search with `value`; the queries as sent, none when nothing was sent. */
  async function sent(value: string): Promise<{ found: Observation; queries: string[] }> {
    server ??= await startTestHttpServer(fakeDatadog([]));
    const before = server.requests.length;
    const found = (await runDatadogAction(request(server.url, ERRORS, { attributes: { service: value } }))).observation;
    const queries = server.requests.slice(before).map((seen) => (JSON.parse(seen.body) as { filter: { query: string } }).filter.query);
    return { found, queries };
  }

  it.each([
    'a" OR service:*',
    "a\\",
    'a\\" OR "b',
    "*",
    "a*b?",
    "a OR b",
    "a AND -b",
    "(a) OR (b)",
    "{a} [b TO c]",
    "a | b",
    "service:other",
    "@http.url:/x",
    "-a",
    "!a",
    "a“b”c",
    "..",
    "#calc",
    "🙂 ünïcödé",
  ])("%j stays the one value of its term", async (value) => {
    const { found, queries } = await sent(value);
    expect(found).toEqual({ kind: "logs", streams: [{ lines: [] }], counts: [] });
    expect(queries).toHaveLength(3);
    for (const query of queries) expect(searchTerms(query)).toEqual([`service:${value}`, "status:error"]);
    expect(queries[0]).toBe(`service:"${value.replace(/[\\"“”]/g, "\\$&")}" status:error`);
  });

  it.each(["a\nb", "a\rb", "a\tb", "a\u0000b", "a\u2028b", "\uD800", ""])("%j is refused before anything is sent", async (value) => {
    const { found, queries } = await sent(value);
    expect(queries).toEqual([]);
    expect(found).toEqual({
      kind: "failed",
      reason: expect.stringMatching(/^could not build the query: attribute service (holds a control character|is empty)/),
    });
  });

  it("any value is refused or stays the value of its one term", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: "binary", maxLength: 12 }), async (value) => {
        const { found, queries } = await sent(value);
        if (queries.length === 0) return found.kind === "failed";
        return queries.every((query) => JSON.stringify(searchTerms(query)) === JSON.stringify([`service:${value}`, "status:error"]));
      }),
      { numRuns: 200 },
    );
    // Three requests a run: the default 5 s is short on a loaded host.
  }, 60_000);
});
