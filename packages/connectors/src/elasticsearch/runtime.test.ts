// The elasticsearch connector against a fake Elasticsearch speaking its search API (bool filters, date
// histograms, sorting), and against a local server where a failure must be seen exactly. What the
// messages and counts say is the analysis' (log-analysis.test.ts; test/connectors for the words).
import type { Observation } from "@pes/contracts";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  freePort,
  sendJson,
  startFakeElasticsearch,
  startTestHttpServer,
  type FakeDocument,
  type FakeElasticsearch,
  type SeenRequest,
  type TestHttpServer,
} from "@pes/local-services";
import type { ActionRequest, TimeWindow } from "../connector.js";
import { resolveSecrets } from "../data-source-secrets.js";
import { runConnectorAction, type Observed } from "../run-action.js";
import { redactedObservation } from "../testing/redacted-observation.js";
import { createHttpClient } from "../undici-http-client.js";
import { elasticsearchRuntime } from "./runtime.js";
import { elasticsearchConnector } from "./definition.js";
import { ElasticsearchAction, type ElasticsearchDataSource } from "./schema.js";

/** Runs an action as the worker does: filter values filled as JSON strings, then the searches. */
const runElasticsearchAction = (request: ActionRequest<ElasticsearchDataSource, ElasticsearchAction>): Promise<Observed> =>
  runConnectorAction(elasticsearchConnector.definition, elasticsearchRuntime, request);

// A fixed past incident: checkout's calls to payment are refused from 14:05 UTC.
const ONSET = Date.parse("2026-11-20T14:05:00Z");
const window: TimeWindow = {
  start: new Date("2026-11-20T13:08:00Z"),
  time: new Date("2026-11-20T14:08:00Z"),
  end: new Date("2026-11-20T14:23:00Z"),
};
const SPLIT = window.time.getTime() - 5 * 60_000;

const env: Record<string, string> = {};
const http = createHttpClient();
afterAll(async () => {
  await http.close();
});

/** Documents every `everyMs` over the window (from `from`), each made by `make(index, at)`. */
function documents(everyMs: number, make: (index: number, at: number) => FakeDocument, from = window.start.getTime()): FakeDocument[] {
  const made = [];
  for (let at = from, index = 0; at <= window.end.getTime(); at += everyMs, index += 1) made.push(make(index, at));
  return made;
}

const log = (index: string, service: string, level: string, message: string, at: number): FakeDocument => ({
  index,
  source: { "@timestamp": new Date(at).toISOString(), service: { name: service }, log: { level }, message },
});

/**
 * Checkout's and search's logs in daily indices, errors included in both, and from 14:05 checkout's
 * refused payment calls. Search has the same error all along: a search not scoped to checkout sees it.
 */
const corpus: FakeDocument[] = [
  ...documents(2_000, (i, at) => log("logs-2026.11.20", "checkout", "info", `GET /api/cart 200 in ${(i * 37) % 300}ms`, at)),
  ...documents(180_000, (i, at) => log("logs-2026.11.20", "checkout", "error", `payment retry ${i % 3} after timeout`, at)),
  ...documents(
    5_000,
    (_i, at) => log("logs-2026.11.20", "checkout", "error", "call to payment failed: connection refused by 10.0.4.2:8443", at),
    ONSET + 2_000,
  ),
  ...documents(3_000, (_i, at) => log("logs-2026.11.20", "search", "error", "call to payment failed: connection refused by 10.0.4.2:8443", at)),
  ...documents(60_000, (_i, at) => log("metrics-2026.11.20", "checkout", "error", "call to payment failed: connection refused by 10.0.4.2:8443", at)),
];

function request(
  dataSource: ElasticsearchDataSource,
  spec: Partial<ElasticsearchAction> = {},
  overrides: Partial<ActionRequest<ElasticsearchDataSource, ElasticsearchAction>> = {},
): ActionRequest<ElasticsearchDataSource, ElasticsearchAction> {
  return {
    title: "Checkout errors",
    dataSource,
    secrets: resolveSecrets(dataSource, { env }).secrets,
    http,
    spec: ElasticsearchAction.parse({
      index: "logs-*",
      filters: [
        { field: "service.name", term: "{{service}}" },
        { field: "log.level", term: "error" },
      ],
      ...spec,
    }),
    attributes: { service: "checkout" },
    window,
    signal: AbortSignal.timeout(10_000),
    ...overrides,
  };
}

/** The bodies of one action's searches (sent in parallel, so seen in any order): the counts first, then by time. */
function bodiesOf(requests: readonly SeenRequest[]): Array<Record<string, unknown>> {
  const bodies = requests.map((seen) => JSON.parse(seen.body) as Record<string, unknown>);
  const key = (body: Record<string, unknown>) => (body.size === 0 ? "0" : `1 ${JSON.stringify(body.query)}`);
  return bodies.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/** How many documents the counts say matched in all, and every message the searches answered. */
function seen(observation: Observation): { total: number; lines: string[] } {
  if (observation.kind !== "logs") return { total: -1, lines: [observation.kind] };
  return {
    total: observation.counts.reduce((sum, { count }) => sum + count, 0),
    lines: observation.streams.flatMap(({ lines }) => lines.map(({ line }) => line)),
  };
}

const dataSource = (url: string, extra: Partial<ElasticsearchDataSource> = {}): ElasticsearchDataSource => ({
  type: "elasticsearch",
  url,
  flavor: "elasticsearch",
  ...extra,
});

describe("runElasticsearchAction against a fake Elasticsearch", () => {
  let search: FakeElasticsearch;
  beforeAll(async () => {
    search = await startFakeElasticsearch({ documents: corpus });
  });
  afterAll(async () => {
    await search?.close();
  });
  afterEach(() => {
    delete env.PES_TEST_ES_KEY;
  });

  it("searches the counts per step and the latest messages of each phase, with the API key, linked to Discover", async () => {
    env.PES_TEST_ES_KEY = "ZXNrZXk6c2VjcmV0LWtleQ==";
    const before = search.requests.length;
    const observed = await runElasticsearchAction(
      request(
        dataSource(`${search.url}/`, { auth: { apiKey: { env: "PES_TEST_ES_KEY" } }, kibana: { url: "https://kibana.example/", dataViewId: "logs-view" } }),
      ),
    );
    // checkout's errors in the logs indices: the payment retries all along, the refused calls from 14:05.
    const expected = corpus.filter(
      ({ index, source }) =>
        index.startsWith("logs-") && JSON.stringify(source).includes('"name":"checkout"') && JSON.stringify(source).includes('"level":"error"'),
    );
    expect(seen(observed.observation)).toEqual({
      total: expected.length,
      lines: expect.arrayContaining(["call to payment failed: connection refused by 10.0.4.2:8443", "payment retry 0 after timeout"]),
    });
    expect(seen(observed.observation).lines).toHaveLength(expected.length);

    const sent = search.requests.slice(before);
    expect(sent.map((item) => `${item.method} ${item.url}`)).toEqual(Array(3).fill("POST /logs-*/_search"));
    expect(sent.map((item) => item.headers.authorization)).toEqual(Array(3).fill("ApiKey ZXNrZXk6c2VjcmV0LWtleQ=="));
    expect(sent.map((item) => item.headers["content-type"])).toEqual(Array(3).fill("application/json"));
    const filters = [{ term: { "service.name": "checkout" } }, { term: { "log.level": "error" } }];
    const range = (bounds: object) => ({ range: { "@timestamp": { ...bounds, format: "epoch_millis" } } });
    expect(bodiesOf(sent)).toEqual([
      {
        size: 0,
        track_total_hits: true,
        query: { bool: { filter: [range({ gte: window.start.getTime(), lte: window.end.getTime() }), ...filters] } },
        aggs: {
          per_step: {
            date_histogram: {
              field: "@timestamp",
              fixed_interval: "60s",
              min_doc_count: 0,
              extended_bounds: { min: window.start.getTime(), max: window.end.getTime() },
            },
          },
        },
      },
      {
        size: 1000,
        track_total_hits: false,
        sort: [{ "@timestamp": { order: "desc" } }],
        _source: ["message", "@timestamp"],
        query: { bool: { filter: [range({ gte: window.start.getTime(), lt: SPLIT }), ...filters] } },
      },
      {
        size: 1000,
        track_total_hits: false,
        sort: [{ "@timestamp": { order: "desc" } }],
        _source: ["message", "@timestamp"],
        query: { bool: { filter: [range({ gte: SPLIT, lte: window.end.getTime() }), ...filters] } },
      },
    ]);

    expect(observed.link).toBe(
      `https://kibana.example/app/discover#/?_g=${encodeURIComponent("(time:(from:'2026-11-20T13:08:00.000Z',to:'2026-11-20T14:23:00.000Z'))")}` +
        `&_a=${encodeURIComponent(`(dataSource:(dataViewId:logs-view,type:dataView),query:(language:kuery,query:'service.name:"checkout" and log.level:"error"'))`)}`,
    );
  });

  it("links to OpenSearch Dashboards' Discover with flavor opensearch, and names OpenSearch in errors", async () => {
    const opensearch = dataSource(search.url, { flavor: "opensearch", kibana: { url: "https://dashboards.example", dataViewId: "ip-1" } });
    const found = await runElasticsearchAction(request(opensearch, { filters: [{ field: "message", phrase: "it's {{service}}" }] }));
    expect(found.link).toBe(
      "https://dashboards.example/app/data-explorer/discover#?" +
        `_a=${encodeURIComponent("(discover:(columns:!(_source),isDirty:!f,sort:!()),metadata:(indexPattern:ip-1,view:discover))")}` +
        `&_g=${encodeURIComponent("(time:(from:'2026-11-20T13:08:00.000Z',to:'2026-11-20T14:23:00.000Z'))")}` +
        `&_q=${encodeURIComponent(`(filters:!(),query:(language:kuery,query:'message:"it!'s checkout"'))`)}`,
    );
    const failed = await runElasticsearchAction(request(opensearch, { index: "nope" }));
    expect(failed.observation).toEqual({ kind: "failed", reason: "OpenSearch answered 404: index_not_found_exception: no such index [nope]" });
  });

  it("reads no message and zero counts when no document matches in the window", async () => {
    const { total, lines } = seen((await runElasticsearchAction(request(dataSource(search.url), {}, { attributes: { service: "cart" } }))).observation);
    expect({ total, lines }).toEqual({ total: 0, lines: [] });
  });

  it("fails with Elasticsearch's own words on an unknown index", async () => {
    const failed = await runElasticsearchAction(request(dataSource(search.url), { index: "logs-2026.11.21" }));
    expect(failed.observation).toEqual({ kind: "failed", reason: "Elasticsearch answered 404: index_not_found_exception: no such index [logs-2026.11.21]" });
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
      "\\",
      'a\\"b',
      "a\nb",
      "a\rb",
      "a\u0000b",
      "..",
      ".",
      "*",
      "checkout*",
      "?",
      "#",
      "/",
      "%2e%2e",
      "ünïcödé ✓ 😀 中文",
      '", "admin": true, "x": "',
      "service.name:checkout OR *",
      "NOT checkout",
      "(checkout)",
      "[1 TO *]",
    ];

    it.each(hostile)("%j is one JSON string value of a term filter and finds exactly its documents", async (value) => {
      const hits = await startFakeElasticsearch({
        documents: [
          ...documents(20_000, (i, at) => log("logs-x", value, "error", `found it #${i}`, at), ONSET),
          ...documents(5_000, (_i, at) => log("logs-x", `${value}x`, "error", "near miss", at), ONSET),
          ...documents(5_000, (_i, at) => log("logs-x", "checkout", "error", "checkout's own", at), ONSET),
        ],
      });
      try {
        const observed = await runElasticsearchAction(request(dataSource(hits.url), { index: "logs-x" }, { attributes: { service: value } }));
        for (const body of bodiesOf(hits.requests)) {
          expect(body.query).toMatchObject({ bool: { filter: [expect.anything(), { term: { "service.name": value } }, { term: { "log.level": "error" } }] } });
          expect(Object.keys(body)).toEqual(
            body.size === 0 ? ["size", "track_total_hits", "query", "aggs"] : ["size", "track_total_hits", "sort", "_source", "query"],
          );
        }
        const { total, lines } = seen(observed.observation);
        expect(total).toBe(55);
        expect(lines).toHaveLength(55);
        expect(lines.every((line) => line.startsWith("found it #"))).toBe(true);
      } finally {
        await hits.close();
      }
    });

    it.each(hostile)("%j is one JSON string value of a match_phrase filter", async (value) => {
      const recorder = await startTestHttpServer((_request, response) =>
        sendJson(response, 200, { hits: { hits: [] }, aggregations: { per_step: { buckets: [] } } }),
      );
      try {
        await runElasticsearchAction(
          request(dataSource(recorder.url), { filters: [{ field: "message", phrase: "refused by {{service}}" }] }, { attributes: { service: value } }),
        );
        for (const body of bodiesOf(recorder.requests)) {
          expect((body.query as { bool: { filter: unknown[] } }).bool.filter.slice(1)).toEqual([{ match_phrase: { message: `refused by ${value}` } }]);
        }
      } finally {
        await recorder.close();
      }
    });
  });
});

describe("runElasticsearchAction on the wire", () => {
  let server: TestHttpServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
    delete env.PES_TEST_ES_KEY;
  });

  it.each([
    [
      "a parsing error",
      400,
      JSON.stringify({
        error: { root_cause: [{ type: "parsing_exception", reason: "unknown query [foo]" }], type: "parsing_exception", reason: "unknown query [foo]" },
        status: 400,
      }),
      "Elasticsearch answered 400: parsing_exception: unknown query [foo]",
    ],
    [
      "a shard failure, by its root cause",
      400,
      JSON.stringify({
        error: {
          root_cause: [{ type: "query_shard_exception", reason: "No mapping found for [@timestamp] in order to sort on" }],
          type: "search_phase_execution_exception",
          reason: "all shards failed",
        },
        status: 400,
      }),
      "Elasticsearch answered 400: query_shard_exception: No mapping found for [@timestamp] in order to sort on",
    ],
    [
      "a text error",
      503,
      "Service Unavailable: back-end server is at capacity",
      "Elasticsearch answered 503: Service Unavailable: back-end server is at capacity",
    ],
    ["an empty error", 502, "", "Elasticsearch answered HTTP 502 Bad Gateway"],
    ["a success that is not JSON", 200, "<html>login</html>", "Elasticsearch answered with something that is not JSON"],
    ["a success in another shape", 200, JSON.stringify({ hits: { total: 3 } }), "Elasticsearch answered in a shape this connector does not know"],
  ])("fails on %s, in plain words", async (_case, status, body, expected) => {
    server = await startTestHttpServer((_request, response) => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(body);
    });
    const failed = await runElasticsearchAction(request(dataSource(server.url, { kibana: { url: "https://kibana.example", dataViewId: "v" } })));
    expect(failed.observation).toEqual({ kind: "failed", reason: expected });
    expect(failed.link).toMatch(/^https:\/\/kibana\.example\/app\/discover#\/\?_g=/);
  });

  it("fails with 'timed out' when the deadline passes before Elasticsearch answers", async () => {
    server = await startTestHttpServer(() => {
      // never answers: the action's deadline must end it
    });
    const failed = await runElasticsearchAction(request(dataSource(server.url), {}, { signal: AbortSignal.timeout(100) }));
    expect(failed.observation).toEqual({ kind: "failed", reason: "no answer from Elasticsearch before the deadline (timed out)" });
  });

  it("fails with 'connection refused' when nothing listens", async () => {
    const port = await freePort();
    const failed = await runElasticsearchAction(request(dataSource(`http://127.0.0.1:${port}`)));
    expect(failed.observation).toEqual({ kind: "failed", reason: "could not reach Elasticsearch (connection refused)" });
  });

  it("sends bearer and basic auth, and redacts a secret an error echoes", async () => {
    server = await startTestHttpServer((seen, response) =>
      sendJson(response, 401, {
        error: { type: "security_exception", reason: `unable to authenticate with provided credentials [${String(seen.headers.authorization)}]` },
        status: 401,
      }),
    );
    env.PES_TEST_ES_KEY = "s3cret-es-token";
    const bearer = redactedObservation(await runElasticsearchAction(request(dataSource(server.url, { auth: { bearerToken: { env: "PES_TEST_ES_KEY" } } }))));
    expect(server.requests[0]?.headers.authorization).toBe("Bearer s3cret-es-token");
    expect(bearer).toEqual({
      kind: "failed",
      reason: "Elasticsearch answered 401: security_exception: unable to authenticate with provided credentials [Bearer [redacted]]",
    });
    const basic = redactedObservation(
      await runElasticsearchAction(request(dataSource(server.url, { auth: { basic: { username: "elastic", password: { env: "PES_TEST_ES_KEY" } } } }))),
    );
    expect(server.requests.at(-1)?.headers.authorization).toBe(`Basic ${Buffer.from("elastic:s3cret-es-token").toString("base64")}`);
    expect(JSON.stringify([bearer, basic])).not.toMatch(/s3cret|ZWxhc3RpYzpzM2NyZXQtZXMtdG9rZW4/);
  });
});

describe("ElasticsearchAction", () => {
  it.each([
    [{ index: "logs-{{service}}" }, ["index"]],
    [{ index: "logs/_doc" }, ["index"]],
    [{ index: "logs?x=1" }, ["index"]],
    [{ index: "logs #x" }, ["index"]],
    [{ index: ".." }, ["index"]],
    [{ index: "logs-*", filters: [{ field: "{{f}}", term: "x" }] }, ["filters", 0, "field"]],
    [{ index: "logs-*", filters: [{ field: "a b", term: "x" }] }, ["filters", 0, "field"]],
    [{ index: "logs-*", timeField: "{{t}}" }, ["timeField"]],
    [{ index: "logs-*", limit: 5001 }, ["limit"]],
  ])("refuses %j", (action, path) => {
    expect(ElasticsearchAction.safeParse(action).error?.issues.map((issue) => issue.path)).toEqual([path]);
  });

  it("accepts patterns, lists and remote clusters, with defaults", () => {
    expect(ElasticsearchAction.parse({ index: "logs-*,other:app-logs-2026.*" })).toEqual({
      index: "logs-*,other:app-logs-2026.*",
      timeField: "@timestamp",
      messageField: "message",
      filters: [],
      limit: 1000,
    });
  });
});
