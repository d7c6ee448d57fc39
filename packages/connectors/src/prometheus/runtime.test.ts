// The prometheus connector against a real Prometheus (history backfilled) and against a local server where
// what was sent, or a failure, must be seen exactly. What the series say (a jump, the worst series, a
// saturation) is the analysis' (metric-analysis.test.ts; test/connectors for the whole way to the words).
import { UnreadableObservationError, type Observation } from "@pes/contracts";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  freePort,
  sendJson,
  startPrometheus,
  startTestHttpServer,
  toOpenMetrics,
  type LocalPrometheus,
  type SeenRequest,
  type SyntheticSeries,
  type TestHttpServer,
} from "@pes/local-services";
import type { ActionRequest, TimeWindow } from "../connector.js";
import { resolveSecrets } from "../data-source-secrets.js";
import { runConnectorAction, type Observed } from "../run-action.js";
import { compileRedaction, createRedactor, DEFAULT_REDACTION_POLICY } from "../redactor.js";
import { redactedObservation } from "../testing/redacted-observation.js";
import { createHttpClient } from "../undici-http-client.js";
import { MAX_SERVICE_GRAPH_CALLS, prometheusRuntime, rangeStepSeconds } from "./runtime.js";
import { prometheusConnector } from "./definition.js";
import type { PrometheusAction, PrometheusDataSource } from "./schema.js";

/** Runs an action as the worker does: the query filled with PromQL string literals, then the fetch. */
const runPrometheusAction = (request: ActionRequest<PrometheusDataSource, PrometheusAction>): Promise<Observed> =>
  runConnectorAction(prometheusConnector.definition, prometheusRuntime, request);

/**
 * What an action observed, read whole as the engine keeps it (the secrets redacted): a range answer is
 * read from its bytes a series at a time, so a series that turns out unreadable fails it then.
 */
function observationOf(observed: Observed): Observation {
  try {
    return redactedObservation(observed);
  } catch (error) {
    if (error instanceof UnreadableObservationError) return { kind: "failed", reason: observed.redact(error.message) };
    throw error;
  }
}

/** The labels of each series (or sample) of a Prometheus answer, and each one's number of samples. */
function seriesOf(observation: Observation): Array<{ metric: Record<string, string>; samples: number }> {
  if (observation.kind !== "prometheus") return [];
  const { data } = observation;
  if (data.resultType === "matrix") return [...data.result].map(({ metric, values }) => ({ metric, samples: values.length }));
  if (data.resultType === "vector") return [...data.result].map(({ metric }) => ({ metric, samples: 1 }));
  return [];
}

// A fixed past incident: the latency of checkout jumps from 440 ms to 1.8 s at 14:05 UTC.
const JUMP = Date.parse("2026-11-20T14:05:00Z") / 1000;
const SATURATED = Date.parse("2026-11-20T14:02:00Z") / 1000;
const window: TimeWindow = {
  start: new Date("2026-11-20T13:08:00Z"),
  time: new Date("2026-11-20T14:08:00Z"),
  end: new Date("2026-11-20T14:23:00Z"),
};

function history(): SyntheticSeries[] {
  const level: Record<string, (t: number) => number> = {
    checkout: (t) => (t >= JUMP ? 1.8 : ([0.42, 0.44, 0.46][(t / 15) % 3] ?? 0.44)),
    search: () => 0.3,
    cart: (t) => (t >= JUMP ? 0.6 : 0.5),
  };
  const latency = Object.entries(level).map(([service, valueAt]) => ({ name: "demo_latency_p99_seconds", labels: { service }, samples: samplesOf(valueAt) }));
  // A database whose connections go from 40 to 98 of 100 at 14:02, another one steady at 50; a disk that
  // drains from 14:00 and is full at 14:15.
  const drainFrom = SATURATED - 2 * 60;
  return [
    ...latency,
    { name: "demo_db_connections", labels: { instance: "db-1:9187" }, samples: samplesOf((t) => (t >= SATURATED ? 98 : 40)) },
    { name: "demo_db_connections", labels: { instance: "db-2:9187" }, samples: samplesOf(() => 50) },
    { name: "demo_max_connections", labels: { instance: "db-1:9187" }, samples: samplesOf(() => 100) },
    { name: "demo_max_connections", labels: { instance: "db-2:9187" }, samples: samplesOf(() => 100) },
    {
      name: "demo_filesystem_avail_bytes",
      labels: { mountpoint: "/data" },
      samples: samplesOf((t) => (t < drainFrom ? 50 * 2 ** 30 : Math.max(0, 50 * 2 ** 30 * (1 - (t - drainFrom) / 900)))),
    },
  ];
}

/**
 * Who calls whom in the shop, as Tempo's service-graph processor counts it (`client`, `server`, and a
 * `connection_type` that splits a pair into two series), and as Istio counts it (source and destination
 * workload). A series without its server (a span whose peer was never named) is no call.
 */
function serviceGraphHistory(): SyntheticSeries[] {
  const counter = (name: string, labels: Record<string, string>): SyntheticSeries => ({
    name,
    type: "counter",
    labels,
    samples: samplesOf((t) => t - (JUMP - 3 * 3600)),
  });
  const tempo = (labels: Record<string, string>) => counter("demo_service_graph_request_total", labels);
  return [
    tempo({ client: "frontend", server: "checkout", namespace: "shop" }),
    tempo({ client: "checkout", server: "cart", namespace: "shop" }),
    tempo({ client: "checkout", server: "payments", namespace: "shop" }),
    tempo({ client: "checkout", server: "payments", namespace: "shop", connection_type: "messaging_system" }),
    tempo({ client: "cart", namespace: "shop" }),
    tempo({ client: "billing", server: "ledger", namespace: "finance" }),
    counter("demo_istio_requests_total", { source_workload: "frontend", destination_workload: "checkout", response_code: "200" }),
    counter("demo_istio_requests_total", { source_workload: "frontend", destination_workload: "checkout", response_code: "503" }),
  ];
}

/** The calls of a service-graph observation, sorted: the answer's order is Prometheus'. */
function callsOf(observation: Observation): string[] | Observation {
  return observation.kind === "service-graph" ? observation.calls.map(({ caller, callee }) => `${caller}>${callee}`).sort() : observation;
}

function samplesOf(valueAt: (t: number) => number): Array<[number, number]> {
  const samples: Array<[number, number]> = [];
  for (let t = JUMP - 3 * 3600; t <= JUMP + 30 * 60; t += 15) samples.push([t, valueAt(t)]);
  return samples;
}

/** The environment the data sources' secrets are resolved from, as the worker does at start. */
const env: Record<string, string> = {};
/** The data sources' HTTP client, as the worker builds one per data source at start. */
const http = createHttpClient();
afterAll(async () => {
  await http.close();
});

function request(
  dataSource: PrometheusDataSource,
  query: string,
  overrides: Partial<ActionRequest<PrometheusDataSource, PrometheusAction>> = {},
): ActionRequest<PrometheusDataSource, PrometheusAction> {
  return {
    title: "p99 latency",
    dataSource,
    secrets: resolveSecrets(dataSource, { env }).secrets,
    http,
    spec: { query, range: true, unit: "s" },
    attributes: { service: "checkout" },
    window,
    signal: AbortSignal.timeout(10_000),
    ...overrides,
  };
}

describe("runPrometheusAction against a real Prometheus", () => {
  let prometheus: LocalPrometheus;
  let dataSource: PrometheusDataSource;

  beforeAll(async () => {
    prometheus = await startPrometheus({ openMetrics: toOpenMetrics([...history(), ...serviceGraphHistory()]) });
    dataSource = { type: "prometheus", url: prometheus.url };
  });
  afterAll(async () => {
    await prometheus?.stop();
  });

  it("asks the filled query over the window, a sample every 15 s, and links to it", async () => {
    const observed = await runPrometheusAction(request(dataSource, "demo_latency_p99_seconds{service={{service}}}"));
    const seen = observationOf(observed);
    expect(seen).toMatchObject({ kind: "prometheus", unit: "s", data: { resultType: "matrix" } });
    // 13:08 to 14:23, aligned to the step: 301 samples.
    expect(seriesOf(seen)).toEqual([{ metric: { __name__: "demo_latency_p99_seconds", service: "checkout" }, samples: 301 }]);
    const link = new URL(observed.link ?? "");
    expect(`${link.origin}${link.pathname}`).toBe(`${prometheus.url}/graph`);
    expect(link.searchParams.get("g0.expr")).toBe('demo_latency_p99_seconds{service="checkout"}');
    expect(link.searchParams.get("g0.range_input")).toBe("75m");
    expect(link.searchParams.get("g0.end_input")).toBe("2026-11-20 14:23:00");
  });

  it("answers every series the query selects", async () => {
    const seen = observationOf(await runPrometheusAction(request(dataSource, "demo_latency_p99_seconds", { attributes: {} })));
    expect(
      seriesOf(seen)
        .map(({ metric }) => metric.service)
        .sort(),
    ).toEqual(["cart", "checkout", "search"]);
  });

  it("keeps a hostile attribute value inside its string literal", async () => {
    const seen = observationOf(
      await runPrometheusAction(request(dataSource, "demo_latency_p99_seconds{service={{service}}}", { attributes: { service: '"} or vector(1) #' } })),
    );
    expect(seen).toMatchObject({ kind: "prometheus", data: { resultType: "matrix", result: [] } });
  });

  describe("with hostile attribute values", () => {
    // The connector talks to a recording server; the query it sent is then asked of the real Prometheus,
    // whose absent() answers with the labels of the selector's equality matchers as it parsed them.
    let recorder: TestHttpServer;
    beforeAll(async () => {
      recorder = await startTestHttpServer((_request, response) => sendJson(response, 200, { status: "success", data: { resultType: "vector", result: [] } }));
    });
    afterAll(async () => {
      await recorder?.close();
    });

    it.each([
      '"} or vector(1) #',
      '"',
      "'",
      "`",
      "'} or vector(1) #",
      "{",
      "}",
      "}}",
      "{{x}}",
      "{{service}}",
      "|",
      "\\",
      'a\\"b',
      "\\x41",
      "a\nb",
      "a\rb",
      "a\u0000b",
      "..",
      ".",
      "%2e%2e",
      "/",
      "?",
      "#",
      "# comment",
      "@",
      "offset 5m",
      "ünïcödé ✓ 😀 中文",
    ])("%j reaches Prometheus as the value of its one label matcher", async (value) => {
      const before = recorder.requests.length;
      await runPrometheusAction({
        ...request({ type: "prometheus", url: recorder.url }, "", { attributes: { service: value } }),
        spec: { query: 'absent(pes_no_such_metric{service={{service}}, env="prod"})', range: false },
      });
      const sent = new URLSearchParams(recorder.requests[before]?.body).get("query") ?? "";
      const response = await fetch(`${prometheus.url}/api/v1/query`, { method: "POST", body: new URLSearchParams({ query: sent }) });
      const body = (await response.json()) as { error?: string; data?: { result: Array<{ metric: Record<string, string> }> } };
      expect(body.error).toBeUndefined();
      expect(body.data?.result.map((series) => series.metric)).toEqual([{ service: value, env: "prod" }]);
    });
  });

  describe("with a limit or a threshold", () => {
    const connections = (limit: string, attributes: Record<string, string> = {}) =>
      runPrometheusAction({ ...request(dataSource, ""), title: "connections", attributes, spec: { query: "demo_db_connections", range: true, limit } });

    it("asks each series' limit over the same window, named by its metric, linked beside the query", async () => {
      const observed = await connections("demo_max_connections");
      const seen = observationOf(observed);
      expect(
        seriesOf(seen)
          .map(({ metric }) => metric.instance)
          .sort(),
      ).toEqual(["db-1:9187", "db-2:9187"]);
      expect(
        seen.kind === "prometheus"
          ? { name: seen.limit?.name, instances: [...(seen.limit?.result ?? [])].map(({ metric }) => metric.instance).sort() }
          : undefined,
      ).toEqual({
        name: "demo_max_connections",
        instances: ["db-1:9187", "db-2:9187"],
      });
      const link = new URL(observed.link ?? "");
      expect([link.searchParams.get("g0.expr"), link.searchParams.get("g1.expr")]).toEqual(["demo_db_connections", "demo_max_connections"]);
    });

    it("names a limit whose query aggregates its series away from their name by the metric the query reads", async () => {
      const seen = observationOf(await connections("max by (instance) (demo_max_connections)"));
      expect(seen).toMatchObject({ kind: "prometheus", limit: { name: "demo_max_connections" } });
    });

    it("fills the limit query's placeholders as PromQL string literals, which a hostile value cannot leave", async () => {
      const limitOf = (observation: Observation) =>
        observation.kind === "prometheus" ? [...(observation.limit?.result ?? [])].map(({ metric }) => metric.instance) : undefined;
      expect(limitOf(observationOf(await connections("demo_max_connections{instance={{instance}}}", { instance: "db-1:9187" })))).toEqual(["db-1:9187"]);
      // Spliced, this value would make the limit `vector(1)`, which every series is far above.
      const hostile = '"} or vector(1) #';
      const observed = await connections("demo_max_connections{instance={{instance}}}", { instance: hostile });
      expect(limitOf(observationOf(observed))).toEqual([]);
      expect(new URL(observed.link ?? "").searchParams.get("g1.expr")).toBe('demo_max_connections{instance="\\"} or vector(1) #"}');
    });

    it("fails the action, saying so, when Prometheus rejects the limit query", async () => {
      const observed = await connections("max(demo_max_connections");
      expect(observationOf(observed)).toEqual({
        kind: "failed",
        reason: expect.stringMatching(/^limit query: Prometheus could not run the query \(bad_data\): .*parse error/),
      });
      expect(observed.link).toContain("g1.expr=");
    });

    it("carries the action's threshold and direction with the answer", async () => {
      const observed = await runPrometheusAction({
        ...request(dataSource, ""),
        title: "free space",
        spec: { query: "demo_filesystem_avail_bytes", range: true, unit: "bytes", threshold: 0, direction: "down" },
      });
      expect(observationOf(observed)).toMatchObject({ kind: "prometheus", unit: "bytes", threshold: 0, direction: "down" });
    });
  });

  describe("with a service graph", () => {
    const graph = (query: string, fields: Partial<PrometheusAction> = {}, attributes: Record<string, string> = { namespace: "shop" }) =>
      runPrometheusAction({
        ...request(dataSource, ""),
        title: "Service graph",
        attributes,
        spec: { query, range: false, serviceGraph: { caller: "client", callee: "server" }, ...fields },
      });

    it("reads Tempo's service-graph metric as who calls whom, a series without its server passed over, and links to the query", async () => {
      const observed = await graph("sum by (client, server) (rate(demo_service_graph_request_total{namespace={{namespace}}}[10m]))");
      const seen = observationOf(observed);
      expect(seen).toEqual({ kind: "service-graph", calls: expect.any(Array) });
      expect(callsOf(seen)).toEqual(["checkout>cart", "checkout>payments", "frontend>checkout"]);
      expect(new URL(observed.link ?? "").searchParams.get("g0.expr")).toBe(
        'sum by (client, server) (rate(demo_service_graph_request_total{namespace="shop"}[10m]))',
      );
    });

    it("takes a range answer's series alike, each pair once however many series carry it", async () => {
      const seen = observationOf(await graph("demo_service_graph_request_total{namespace={{namespace}}}", { range: true }));
      expect(callsOf(seen)).toEqual(["checkout>cart", "checkout>payments", "frontend>checkout"]);
    });

    it("reads the labels it is told, as Istio names a call's two ends", async () => {
      const seen = observationOf(await graph("demo_istio_requests_total", { serviceGraph: { caller: "source_workload", callee: "destination_workload" } }, {}));
      expect(callsOf(seen)).toEqual(["frontend>checkout"]);
    });

    it("answers an empty graph, not a failure, when no series names both ends", async () => {
      expect(observationOf(await graph("demo_service_graph_request_total{namespace={{namespace}}}", {}, { namespace: "nowhere" }))).toEqual({
        kind: "service-graph",
        calls: [],
      });
      // Series there are, but none with a server.
      expect(observationOf(await graph("sum by (client) (demo_service_graph_request_total)"))).toEqual({ kind: "service-graph", calls: [] });
    });

    it("fails, saying so, when the answer is not series", async () => {
      expect(observationOf(await graph("scalar(sum(demo_service_graph_request_total))"))).toEqual({
        kind: "failed",
        reason: "Prometheus answered a scalar, not series whose labels name who calls whom",
      });
    });

    it("fails on a query Prometheus rejects, as any action does", async () => {
      expect(observationOf(await graph("sum by (client, server) (demo_service_graph_request_total"))).toEqual({
        kind: "failed",
        reason: expect.stringMatching(/^Prometheus could not run the query \(bad_data\): .*parse error/),
      });
    });
  });

  it("runs an instant query at the issue time", async () => {
    const observed = await runPrometheusAction({
      ...request(dataSource, "demo_latency_p99_seconds{service={{service}}}"),
      spec: { query: "demo_latency_p99_seconds{service={{service}}}", range: false, unit: "s" },
    });
    const seen = observationOf(observed);
    expect(seen.kind === "prometheus" && seen.data.resultType === "vector" ? [...seen.data.result].map(({ value }) => value) : undefined).toEqual([
      [window.time.getTime() / 1000, "1.8"],
    ]);
  });

  it("fails on a query Prometheus rejects, keeping the link", async () => {
    const observed = await runPrometheusAction(request(dataSource, "rate(demo_latency_p99_seconds{service={{service}}}"));
    expect(observationOf(observed)).toEqual({
      kind: "failed",
      reason: expect.stringMatching(/^Prometheus could not run the query \(bad_data\): .*parse error/),
    });
    expect(observed.link).toContain("/graph?g0.expr=");
  });

  it("skips an action whose attributes the issue lacks, naming them", async () => {
    const observed = await runPrometheusAction(
      request(dataSource, "x{service={{service}}, zone={{zone}}, pod={{pod}}}", { attributes: { service: "checkout" } }),
    );
    expect(observed.observation).toEqual({ kind: "skipped", missing: ["zone", "pod"] });
  });
});

describe("runPrometheusAction on the wire", () => {
  let server: TestHttpServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
    delete env.PES_TEST_PROM_TOKEN;
  });

  const emptyMatrix = { status: "success", data: { resultType: "matrix", result: [] } };

  it("POSTs a form with the window and a step, with bearer auth", async () => {
    server = await startTestHttpServer((_request, response) => sendJson(response, 200, emptyMatrix));
    env.PES_TEST_PROM_TOKEN = "s3cret-token";
    const outcome = await runPrometheusAction(
      request({ type: "prometheus", url: `${server.url}/`, auth: { bearerToken: { env: "PES_TEST_PROM_TOKEN" } } }, "up{service={{service}}}"),
    );
    expect(observationOf(outcome)).toEqual({ kind: "prometheus", data: { resultType: "matrix", result: [] }, unit: "s" });
    const seen = server.requests[0];
    expect(seen?.method).toBe("POST");
    expect(seen?.url).toBe("/api/v1/query_range");
    expect(seen?.headers.authorization).toBe("Bearer s3cret-token");
    expect(seen?.headers["content-type"]).toMatch(/^application\/x-www-form-urlencoded/);
    const form = new URLSearchParams(seen?.body);
    expect(form.get("query")).toBe('up{service="checkout"}');
    expect(form.get("step")).toBe("15");
    expect(form.get("start")).toBe(String(window.start.getTime() / 1000));
    expect(form.get("end")).toBe(String(window.end.getTime() / 1000));
  });

  it("sends basic auth and asks an instant query at the issue time", async () => {
    server = await startTestHttpServer((_request, response) => sendJson(response, 200, { status: "success", data: { resultType: "vector", result: [] } }));
    env.PES_TEST_PROM_TOKEN = "pa:ss";
    const outcome = await runPrometheusAction({
      ...request({ type: "prometheus", url: server.url, auth: { basic: { username: "reader", password: { env: "PES_TEST_PROM_TOKEN" } } } }, "up"),
      spec: { query: "up", range: false },
    });
    expect(observationOf(outcome)).toEqual({ kind: "prometheus", data: { resultType: "vector", result: [] } });
    const seen = server.requests[0];
    expect(seen?.url).toBe("/api/v1/query");
    expect(seen?.headers.authorization).toBe(`Basic ${Buffer.from("reader:pa:ss").toString("base64")}`);
    expect(new URLSearchParams(seen?.body).get("time")).toBe(String(window.time.getTime() / 1000));
  });

  it.each([
    [
      "a vector, +Inf included",
      {
        resultType: "vector",
        result: [
          { metric: { service: "a" }, value: [1, "2"] },
          { metric: { service: "b" }, value: [1, "+Inf"] },
        ],
      },
    ],
    ["a scalar", { resultType: "scalar", result: [1, "0.25"] }],
    ["a string", { resultType: "string", result: [1, "ok"] }],
  ])("answers %s as it is", async (_case, data) => {
    server = await startTestHttpServer((_request, response) => sendJson(response, 200, { status: "success", data }));
    const outcome = await runPrometheusAction({ ...request({ type: "prometheus", url: server.url }, "up"), spec: { query: "up", range: false, unit: "s" } });
    expect(observationOf(outcome)).toEqual({ kind: "prometheus", data, unit: "s" });
    expect(outcome.link).toMatch(/\/graph\?g0\.expr=up&/);
  });

  it("fails without a request when the token's variable is unset, naming the variable only", async () => {
    server = await startTestHttpServer((_request, response) => sendJson(response, 200, emptyMatrix));
    const outcome = await runPrometheusAction(request({ type: "prometheus", url: server.url, auth: { bearerToken: { env: "PES_TEST_PROM_TOKEN" } } }, "up"));
    expect(observationOf(outcome)).toEqual({
      kind: "failed",
      reason: "cannot authenticate to Prometheus: environment variable PES_TEST_PROM_TOKEN is not set",
    });
    expect(server.requests).toHaveLength(0);
  });

  it.each([
    ["an HTTP error without JSON", 502, "text/html", "<html>bad gateway</html>", "Prometheus answered HTTP 502 Bad Gateway"],
    ["a success that is not JSON", 200, "text/html", "<html>login</html>", "Prometheus answered with something that is not JSON"],
    [
      "an error body",
      422,
      "application/json",
      JSON.stringify({ status: "error", errorType: "execution", error: "many-to-many matching not allowed" }),
      "Prometheus could not run the query (execution): many-to-many matching not allowed",
    ],
    [
      "an unknown shape",
      200,
      "application/json",
      JSON.stringify({ status: "success", data: { resultType: "histogram" } }),
      "Prometheus answered in a shape this connector does not know",
    ],
    [
      "a sample whose value is not a string",
      200,
      "application/json",
      JSON.stringify({
        status: "success",
        data: {
          resultType: "matrix",
          result: [
            {
              metric: {},
              values: [
                [1700000000, "1"],
                [1700000015, 2],
              ],
            },
          ],
        },
      }),
      "Prometheus answered in a shape this connector does not know",
    ],
    [
      "a vector sample without its time",
      200,
      "application/json",
      JSON.stringify({ status: "success", data: { resultType: "vector", result: [{ metric: {}, value: ["1"] }] } }),
      "Prometheus answered in a shape this connector does not know",
    ],
  ])("fails on %s, in plain words and with the link", async (_case, status, contentType, body, expected) => {
    server = await startTestHttpServer((_request, response) => {
      response.writeHead(status, { "content-type": contentType });
      response.end(body);
    });
    env.PES_TEST_PROM_TOKEN = "s3cret-token";
    const outcome = await runPrometheusAction(request({ type: "prometheus", url: server.url, auth: { bearerToken: { env: "PES_TEST_PROM_TOKEN" } } }, "up"));
    expect(observationOf(outcome)).toEqual({ kind: "failed", reason: expected });
    expect(outcome.link).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/graph\?g0\.expr=up&/);
    expect(JSON.stringify(observationOf(outcome))).not.toContain("s3cret-token");
  });

  it("sends its query again while Prometheus answers 503, within the action's deadline", async () => {
    let answered = 0;
    server = await startTestHttpServer((_request, response) => {
      answered += 1;
      if (answered === 1) {
        response.writeHead(503, { "content-type": "text/plain" });
        response.end("Service Unavailable");
      } else {
        sendJson(response, 200, emptyMatrix);
      }
    });
    const outcome = await runPrometheusAction(request({ type: "prometheus", url: server.url }, "up", { deadline: Date.now() + 10_000 }));
    expect(observationOf(outcome)).toMatchObject({ kind: "prometheus", data: { resultType: "matrix", result: [] } });
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1]?.body).toBe(server.requests[0]?.body);
  });

  it("does not wait a Retry-After past the action's deadline: the 429 is the answer", async () => {
    server = await startTestHttpServer((_request, response) => {
      response.writeHead(429, { "content-type": "text/plain", "retry-after": "120" });
      response.end("slow down");
    });
    const outcome = await runPrometheusAction(request({ type: "prometheus", url: server.url }, "up", { deadline: Date.now() + 10_000 }));
    expect(observationOf(outcome)).toEqual({ kind: "failed", reason: "Prometheus answered HTTP 429 Too Many Requests" });
    expect(server.requests).toHaveLength(1);
  });

  it("fails with 'timed out' when the deadline passes before Prometheus answers", async () => {
    server = await startTestHttpServer(() => {
      // never answers: the action's deadline must end it
    });
    const outcome = await runPrometheusAction(request({ type: "prometheus", url: server.url }, "up", { signal: AbortSignal.timeout(100) }));
    expect(observationOf(outcome)).toEqual({ kind: "failed", reason: "no answer from Prometheus before the deadline (timed out)" });
  });

  it("fails with 'connection refused' when nothing listens", async () => {
    const port = await freePort();
    const outcome = await runPrometheusAction(request({ type: "prometheus", url: `http://127.0.0.1:${port}` }, "up"));
    expect(observationOf(outcome)).toEqual({ kind: "failed", reason: "could not reach Prometheus (connection refused)" });
    expect(outcome.link).toContain(`127.0.0.1:${port}/graph`);
  });
});

describe("runPrometheusAction redacts the data source's secrets", () => {
  let server: TestHttpServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
    delete env.PES_TEST_PROM_TOKEN;
  });

  /** A Prometheus-compatible endpoint that quotes the request's headers in its error text. */
  async function echoingEndpoint(error: (seen: SeenRequest) => string): Promise<TestHttpServer> {
    return startTestHttpServer((seen, response) => sendJson(response, 400, { status: "error", errorType: "bad_data", error: error(seen) }));
  }

  it("redacts a bearer token quoted in an error", async () => {
    server = await echoingEndpoint(
      (seen) => `invalid request: Authorization: ${String(seen.headers.authorization)}; token=${encodeURIComponent("s3cret/token")}`,
    );
    env.PES_TEST_PROM_TOKEN = "s3cret/token";
    const outcome = await runPrometheusAction(request({ type: "prometheus", url: server.url, auth: { bearerToken: { env: "PES_TEST_PROM_TOKEN" } } }, "up"));
    expect(server.requests[0]?.headers.authorization).toBe("Bearer s3cret/token");
    expect(observationOf(outcome)).toEqual({
      kind: "failed",
      reason: "Prometheus could not run the query (bad_data): invalid request: Authorization: Bearer [redacted]; token=[redacted]",
    });
    expect(JSON.stringify(observationOf(outcome))).not.toMatch(/s3cret/);
  });

  it("redacts basic credentials quoted in an error: the header's base64, the password, URL-encoded or not", async () => {
    server = await echoingEndpoint(
      (seen) =>
        `Authorization: ${String(seen.headers.authorization)} user=reader password=pa:ss w/rd form=${new URLSearchParams({ p: "pa:ss w/rd" }).toString()}`,
    );
    env.PES_TEST_PROM_TOKEN = "pa:ss w/rd";
    const outcome = await runPrometheusAction(
      request({ type: "prometheus", url: server.url, auth: { basic: { username: "reader", password: { env: "PES_TEST_PROM_TOKEN" } } } }, "up"),
    );
    expect(observationOf(outcome)).toEqual({
      kind: "failed",
      reason: "Prometheus could not run the query (bad_data): Authorization: Basic [redacted] user=reader password=[redacted] form=p=[redacted]",
    });
    const credential = Buffer.from("reader:pa:ss w/rd").toString("base64");
    expect(JSON.stringify(observationOf(outcome))).not.toContain(credential);
    expect(JSON.stringify(observationOf(outcome))).not.toContain("pa:ss");
  });

  it("redacts a token that comes back in the data, e.g. as a label value", async () => {
    env.PES_TEST_PROM_TOKEN = "s3cret-token";
    server = await startTestHttpServer((seen, response) =>
      sendJson(response, 200, {
        status: "success",
        data: {
          resultType: "vector",
          result: [
            { metric: { header: String(seen.headers.authorization) }, value: [1700000000, "1"] },
            { metric: { header: "other" }, value: [1700000000, "0.5"] },
          ],
        },
      }),
    );
    const outcome = await runPrometheusAction({
      ...request({ type: "prometheus", url: server.url, auth: { bearerToken: { env: "PES_TEST_PROM_TOKEN" } } }, "up"),
      spec: { query: "up", range: false },
    });
    expect(seriesOf(observationOf(outcome)).map(({ metric }) => metric.header)).toEqual(["Bearer [redacted]", "other"]);
    expect(JSON.stringify(observationOf(outcome))).not.toContain("s3cret-token");
  });
});

describe("runPrometheusAction with a service graph on the wire", () => {
  let server: TestHttpServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
    delete env.PES_TEST_PROM_TOKEN;
  });

  const vector = (result: unknown[]) => ({ status: "success", data: { resultType: "vector", result } });
  const sample = (metric: Record<string, string>) => ({ metric, value: [1700000000, "1"] });
  const graphAction = (dataSource: PrometheusDataSource) => ({
    ...request(dataSource, "up"),
    spec: { query: "up", range: false, serviceGraph: { caller: "client", callee: "server" } },
  });

  it(`keeps the first ${MAX_SERVICE_GRAPH_CALLS} calls, each once, and says how many there were`, async () => {
    const result = Array.from({ length: MAX_SERVICE_GRAPH_CALLS + 5 }, (_, index) => sample({ client: "frontend", server: `service-${index}` }));
    // The first pair again, and series that are no call: neither counts.
    result.splice(1, 0, sample({ client: "frontend", server: "service-0", code: "503" }), sample({ client: "frontend", server: "" }), sample({ server: "x" }));
    server = await startTestHttpServer((_request, response) => sendJson(response, 200, vector(result)));
    const seen = observationOf(await runPrometheusAction(graphAction({ type: "prometheus", url: server.url })));
    expect(
      seen.kind === "service-graph" ? { first: seen.calls[0], last: seen.calls.at(-1), count: seen.calls.length, truncated: seen.truncated } : seen,
    ).toEqual({
      first: { caller: "frontend", callee: "service-0" },
      last: { caller: "frontend", callee: `service-${MAX_SERVICE_GRAPH_CALLS - 1}` },
      count: MAX_SERVICE_GRAPH_CALLS,
      truncated: { kept: MAX_SERVICE_GRAPH_CALLS, of: MAX_SERVICE_GRAPH_CALLS + 5 },
    });
  });

  it("fails on a series it cannot read, in plain words", async () => {
    server = await startTestHttpServer((_request, response) =>
      sendJson(response, 200, vector([sample({ client: "a", server: "b" }), { metric: { client: 1 } }])),
    );
    expect(observationOf(await runPrometheusAction(graphAction({ type: "prometheus", url: server.url })))).toEqual({
      kind: "failed",
      reason: "Prometheus answered in a shape this connector does not know",
    });
  });

  it("redacts the data source's secrets from the services' names, and the redaction boundary finds what it finds in any answer", async () => {
    env.PES_TEST_PROM_TOKEN = "s3cret-token";
    server = await startTestHttpServer((seen, response) =>
      sendJson(
        response,
        200,
        vector([sample({ client: String(seen.headers.authorization), server: "checkout" }), sample({ client: "checkout", server: "10.0.0.12" })]),
      ),
    );
    const observed = await runPrometheusAction(graphAction({ type: "prometheus", url: server.url, auth: { bearerToken: { env: "PES_TEST_PROM_TOKEN" } } }));
    const seen = observationOf(observed);
    expect(seen).toEqual({
      kind: "service-graph",
      calls: [
        { caller: "Bearer [redacted]", callee: "checkout" },
        { caller: "checkout", callee: "10.0.0.12" },
      ],
    });
    // As the engine's boundary redacts what leaves the worker (an address is found by its shape).
    const redactor = createRedactor(compileRedaction(DEFAULT_REDACTION_POLICY));
    expect(redactor.value(seen)).toEqual({
      kind: "service-graph",
      calls: [
        { caller: "Bearer [redacted]", callee: "checkout" },
        { caller: "checkout", callee: expect.stringMatching(/^«ipv4:[0-9a-f]{8}»$/) },
      ],
    });
  });
});

describe("rangeStepSeconds", () => {
  const of = (minutes: number) => rangeStepSeconds({ start: new Date(0), time: new Date(0), end: new Date(minutes * 60_000) });
  it("keeps 240–500 points for windows of an hour or more, never below 15 s", () => {
    expect(of(75)).toBe(15);
    expect(of(60)).toBe(15);
    expect(of(10)).toBe(15);
    for (const minutes of [60, 75, 120, 180, 360, 1440, 2880, 10080]) {
      const points = (minutes * 60) / of(minutes);
      expect(points).toBeGreaterThanOrEqual(240);
      expect(points).toBeLessThanOrEqual(500);
      expect(of(minutes) % 15).toBe(0);
    }
  });
});
