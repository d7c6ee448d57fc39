// The datadog connector's metric queries against a local server speaking Datadog's v1 query API. What the
// series say (the worst one by its tags, a gap, no data) is the analysis' (observation-reading.test.ts).
import type { Observation } from "@pes/contracts";
import { freePort, sendJson, startTestHttpServer, type TestHttpServer } from "@pes/local-services";
import fc from "fast-check";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { ActionRequest, TimeWindow } from "../connector.js";
import { resolveSecrets } from "../data-source-secrets.js";
import { runConnectorAction, type Observed } from "../run-action.js";
import { redactedObservation } from "../testing/redacted-observation.js";
import { createHttpClient } from "../undici-http-client.js";
import { datadogRuntime } from "./runtime.js";
import { datadogConnector } from "./definition.js";
import type { DatadogAction, DatadogDataSource } from "./schema.js";

// A fixed past incident: the p99 of checkout jumps from 440 ms to 1.8 s at 14:05 UTC.
const JUMP = Date.parse("2026-11-20T14:05:00Z");
const window: TimeWindow = {
  start: new Date("2026-11-20T13:08:00Z"),
  time: new Date("2026-11-20T14:08:00Z"),
  end: new Date("2026-11-20T14:23:00Z"),
};

/** A series as Datadog's v1 query API writes it: `[ms, value]` points every 20 s, tags as `key:value`. */
function series(tags: string[], valueAt: (ms: number) => number | null, scope = tags.join(",")) {
  const pointlist: Array<[number, number | null]> = [];
  for (let at = window.start.getTime(); at <= window.end.getTime(); at += 20_000) pointlist.push([at, valueAt(at)]);
  return {
    metric: "trace.http.request.duration",
    display_name: "trace.http.request.duration",
    pointlist,
    scope,
    tag_set: tags,
    expression: "x",
    aggr: "avg",
    interval: 20,
    length: pointlist.length,
  };
}
const checkout = (ms: number) => (ms >= JUMP ? 1.8 : ([0.42, 0.44, 0.46][(ms / 20_000) % 3] ?? 0.44));

function answer(seriesList: unknown[]) {
  return {
    status: "ok",
    res_type: "time_series",
    series: seriesList,
    from_date: window.start.getTime(),
    to_date: window.end.getTime(),
    group_by: [],
    query: "q",
    message: "",
  };
}

/** The environment the keys are resolved from, as the worker does at start. */
const env: Record<string, string> = { PES_TEST_DD_API_KEY: "dd-api-s3cret-0123", PES_TEST_DD_APP_KEY: "dd-app-s3cret-4567" };
const http = createHttpClient();
afterAll(async () => {
  await http.close();
});

function dataSourceAt(url: string): DatadogDataSource {
  return { type: "datadog", url, apiKey: { env: "PES_TEST_DD_API_KEY" }, appKey: { env: "PES_TEST_DD_APP_KEY" } };
}

function request(
  dataSource: DatadogDataSource,
  spec: DatadogAction,
  overrides: Partial<ActionRequest<DatadogDataSource, DatadogAction>> = {},
): ActionRequest<DatadogDataSource, DatadogAction> {
  return {
    title: "p99 latency",
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

/** Runs an action as the worker does: the query filled (values checked for its language), then the fetch. */
const runDatadogAction = (request: ActionRequest<DatadogDataSource, DatadogAction>): Promise<Observed> =>
  runConnectorAction(datadogConnector.definition, datadogRuntime, request);
/** What the action observed. */
const runOne = async (request: ActionRequest<DatadogDataSource, DatadogAction>): Promise<Observation> => (await runDatadogAction(request)).observation;

const P99 = { metrics: "avg:trace.http.request.duration.by.service.99p{service:{{service}},env:prod} by {host}", unit: "s" };

describe("runDatadogAction: metrics", () => {
  let server: TestHttpServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it("asks the query API for the window with both keys, answers its series and links to the explorer", async () => {
    server = await startTestHttpServer((_request, response) =>
      sendJson(response, 200, answer([series(["service:checkout", "env:prod", "host:web-1"], checkout)])),
    );
    const observed = await runDatadogAction(request(dataSourceAt(server.url), P99));
    const seen = server.requests[0];
    expect(seen?.method).toBe("GET");
    const url = new URL(seen?.url ?? "", server.url);
    expect(url.pathname).toBe("/api/v1/query");
    expect(url.searchParams.get("from")).toBe(String(window.start.getTime() / 1000));
    expect(url.searchParams.get("to")).toBe(String(window.end.getTime() / 1000));
    expect(url.searchParams.get("query")).toBe("avg:trace.http.request.duration.by.service.99p{service:checkout,env:prod} by {host}");
    expect(seen?.headers["dd-api-key"]).toBe("dd-api-s3cret-0123");
    expect(seen?.headers["dd-application-key"]).toBe("dd-app-s3cret-4567");

    const { pointlist } = series(["service:checkout", "env:prod", "host:web-1"], checkout);
    expect(observed.observation).toEqual({
      kind: "datadog-metrics",
      series: [{ pointlist, tag_set: ["service:checkout", "env:prod", "host:web-1"], scope: "service:checkout,env:prod,host:web-1" }],
      unit: "s",
    });
    const link = new URL(observed.link ?? "");
    expect(`${link.origin}${link.pathname}`).toBe(`${server.url}/metric/explorer`);
    expect(Object.fromEntries(link.searchParams)).toEqual({
      from_ts: String(window.start.getTime()),
      to_ts: String(window.end.getTime()),
      live: "false",
      exp_metric: "trace.http.request.duration.by.service.99p",
      exp_scope: "service:checkout,env:prod",
      exp_agg: "avg",
    });
  });

  it("keeps null points, which are gaps, and answers no series as none", async () => {
    server = await startTestHttpServer((request, response) =>
      sendJson(
        response,
        200,
        answer(request.url.includes("search") ? [] : [series(["service:checkout", "host:web-2"], (ms) => (ms % 60_000 === 0 ? null : checkout(ms)))]),
      ),
    );
    const observed = await runOne(request(dataSourceAt(server.url), P99));
    expect(observed.kind === "datadog-metrics" ? observed.series[0]?.pointlist.filter(([, value]) => value === null).length : undefined).toBe(76);
    expect(await runOne(request(dataSourceAt(server.url), P99, { attributes: { service: "search" } }))).toEqual({
      kind: "datadog-metrics",
      series: [],
      unit: "s",
    });
  });

  it("skips an action whose attributes the issue lacks", async () => {
    server = await startTestHttpServer((_request, response) => sendJson(response, 200, answer([])));
    const outcome = await runOne(request(dataSourceAt(server.url), P99, { attributes: {} }));
    expect(outcome).toEqual({ kind: "skipped", missing: ["service"] });
    expect(server.requests).toHaveLength(0);
  });

  it.each([
    ["Datadog's error answer", 403, JSON.stringify({ errors: ["Forbidden"] }), "Datadog answered 403: Forbidden"],
    [
      "a query Datadog rejects",
      400,
      JSON.stringify({ errors: ["Error parsing query: unable to parse avg:x{: Rule 'scope_expr' didn't match"] }),
      "Datadog answered 400: Error parsing query: unable to parse avg:x{: Rule 'scope_expr' didn't match",
    ],
    ["an error without JSON", 502, "<html>bad gateway</html>", "Datadog answered 502 Bad Gateway"],
    [
      "an error status in a 200",
      200,
      JSON.stringify({ status: "error", error: "Rate limit of 300 requests in 3600 seconds reached", series: [] }),
      "Datadog could not run the query: Rate limit of 300 requests in 3600 seconds reached",
    ],
    ["a success that is not JSON", 200, "<html>login</html>", "Datadog answered with something that is not JSON"],
    [
      "an unknown shape",
      200,
      JSON.stringify({ status: "ok", series: [{ pointlist: [["soon", 1]] }] }),
      "Datadog answered in a shape this connector does not know",
    ],
  ])("fails on %s, in plain words and with the link", async (_case, status, body, expected) => {
    server = await startTestHttpServer((_request, response) => {
      response.writeHead(status, { "content-type": body.startsWith("<") ? "text/html" : "application/json" });
      response.end(body);
    });
    const outcome = await runDatadogAction(request(dataSourceAt(server.url), P99));
    expect(outcome.observation).toEqual({ kind: "failed", reason: expected });
    expect(outcome.link).toContain("/metric/explorer?");
  });

  it("redacts both keys when Datadog quotes them back", async () => {
    server = await startTestHttpServer((seen, response) =>
      sendJson(response, 403, { errors: [`key ${String(seen.headers["dd-api-key"])} with ${String(seen.headers["dd-application-key"])} is not valid`] }),
    );
    const outcome = redactedObservation(await runDatadogAction(request(dataSourceAt(server.url), P99)));
    expect(outcome).toEqual({ kind: "failed", reason: "Datadog answered 403: key [redacted] with [redacted] is not valid" });
    expect(JSON.stringify(outcome)).not.toMatch(/s3cret/);
  });

  it("fails without a request when a key's variable is unset, naming the variable only", async () => {
    server = await startTestHttpServer((_request, response) => sendJson(response, 200, answer([])));
    const dataSource = { ...dataSourceAt(server.url), appKey: { env: "PES_TEST_DD_UNSET" } };
    const outcome = await runOne(request(dataSource, P99));
    expect(outcome).toEqual({ kind: "failed", reason: "cannot authenticate to Datadog: environment variable PES_TEST_DD_UNSET is not set" });
    expect(server.requests).toHaveLength(0);
  });

  it("fails with 'timed out' when the deadline passes before Datadog answers", async () => {
    server = await startTestHttpServer(() => {
      // never answers: the action's deadline must end it
    });
    const outcome = await runDatadogAction(request(dataSourceAt(server.url), P99, { signal: AbortSignal.timeout(100) }));
    expect(outcome.observation).toEqual({ kind: "failed", reason: "no answer from Datadog before the deadline (timed out)" });
    expect(outcome.link).toContain("/metric/explorer?");
  });

  it("fails with 'connection refused' when nothing listens", async () => {
    const port = await freePort();
    const outcome = await runOne(request(dataSourceAt(`http://127.0.0.1:${port}`), P99));
    expect(outcome).toEqual({ kind: "failed", reason: "could not reach Datadog (connection refused)" });
  });
});

/**
 * The tag filter of a metric query as Datadog's syntax reads it: the text between the braces, split at
 * commas into `key:value` terms. A term holding anything the syntax reads (a space, `!`, `*`, `(`, a
 * quote, a brace) would be more than one tag.
 */
function filterTerms(query: string): string[] {
  const filter = /\{([^{}]*)\}/.exec(query)?.[1];
  if (filter === undefined) throw new Error(`no single tag filter in ${query}`);
  return filter.split(",");
}

describe("runDatadogAction: hostile attribute values in a metric query", () => {
  let server: TestHttpServer;
  const spec = { metrics: "avg:trace.http.request.errors{service:{{service}},env:prod}" };
  afterAll(async () => {
    await server?.close();
  });

  /** Runs the query with `value`; the query as sent, or undefined when nothing was sent. */
  async function sent(value: string): Promise<{ outcome: Observation; query: string | undefined }> {
    server ??= await startTestHttpServer((_request, response) => sendJson(response, 200, answer([])));
    const before = server.requests.length;
    const outcome = await runOne(request(dataSourceAt(server.url), spec, { attributes: { service: value } }));
    const seen = server.requests[before];
    return { outcome, query: seen === undefined ? undefined : (new URL(seen.url, server.url).searchParams.get("query") ?? "") };
  }

  it.each([
    "a,service:*",
    "a} or avg:other{*",
    "*",
    "a b",
    "a OR b",
    "!a",
    "-a",
    'a"b',
    "a'b",
    "a\\b",
    "a|b",
    "a\nb",
    "(a)",
    "a{x}",
    "",
    "x".repeat(201),
    "a#b",
    "a;b",
  ])("%j is refused before anything is sent", async (value) => {
    const { outcome, query } = await sent(value);
    expect(query).toBeUndefined();
    expect(outcome).toEqual({
      kind: "failed",
      reason: expect.stringMatching(/^could not build the query: attribute service (holds characters a Datadog tag cannot|is empty|is longer)/),
    });
  });

  it.each(["checkout", "checkout-v2", "payments_api", "team:payments", "a/b", "..", ".", "1.42.0", "ünïcödé", "中文"])(
    "%j is sent as the one value of its tag",
    async (value) => {
      const { query } = await sent(value);
      expect(filterTerms(query ?? "")).toEqual([`service:${value}`, "env:prod"]);
    },
  );

  it("any value is refused or stays the value of its one tag", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: "binary", maxLength: 12 }), async (value) => {
        const { outcome, query } = await sent(value);
        if (query === undefined) return outcome.kind === "failed";
        const terms = filterTerms(query);
        return terms.length === 2 && terms[0] === `service:${value}` && terms[1] === "env:prod" && !/[\s!*(){}"'\\]/u.test(value);
      }),
      { numRuns: 200 },
    );
    // A request a run: the default 5 s is short on a loaded host.
  }, 60_000);
});
