// A real Prometheus, the prometheus connector and the analysis, as a worker runs them: what a result says
// of a metric, from the source's wire format to the words. The connector's own behaviour (requests,
// escaping, failures) is tested in packages/connectors; the analysis' on data in packages/analysis.
import { SATURATION_SEVERITY } from "@pes/analysis";
import { sendJson, startPrometheus, startTestHttpServer, toOpenMetrics, type LocalPrometheus, type SyntheticSeries } from "@pes/local-services";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answersOf, evidenceOf } from "./connector-reading.js";

// A fixed past incident: the latency of checkout jumps from 440 ms to 1.8 s at 14:05 UTC.
const JUMP = Date.parse("2026-11-20T14:05:00Z") / 1000;
const SATURATED = Date.parse("2026-11-20T14:02:00Z") / 1000;
const window = { start: new Date("2026-11-20T13:08:00Z"), time: new Date("2026-11-20T14:08:00Z"), end: new Date("2026-11-20T14:23:00Z") };

function samplesOf(valueAt: (t: number) => number): Array<[number, number]> {
  const samples: Array<[number, number]> = [];
  for (let t = JUMP - 3 * 3600; t <= JUMP + 30 * 60; t += 15) samples.push([t, valueAt(t)]);
  return samples;
}

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

describe("a Prometheus range answer, read", () => {
  let prometheus: LocalPrometheus;
  const ask = (query: string, fields: object = { unit: "s" }, attributes: Record<string, string> = { service: "checkout" }, title = "p99 latency") =>
    evidenceOf({ type: "prometheus", url: prometheus.url }, { query, range: true, ...fields }, { title, window, attributes });

  beforeAll(async () => {
    prometheus = await startPrometheus({ openMetrics: toOpenMetrics(history()) });
  });
  afterAll(async () => {
    await prometheus?.stop();
  });

  it("finds the 4× jump of the scoped series and dates it", async () => {
    const found = await ask("demo_latency_p99_seconds{service={{service}}}");
    expect(found).toMatchObject([{ kind: "metric", abnormal: true, onset: new Date(JUMP * 1000), labels: { service: "checkout" }, seriesCount: 1 }]);
    expect(found[0]?.kind === "metric" && found[0].severity).toBeCloseTo(4.09, 2);
    expect(answersOf(found, window)).toEqual(["p99 latency (service=checkout) 1.8 s, 4.1× its level in the hour before (440 ms), since 14:05 UTC"]);
  });

  it("names the worst series when the query returns several, and a steady one as normal", async () => {
    expect(answersOf(await ask("demo_latency_p99_seconds", undefined, {}), window)).toEqual([
      "p99 latency (service=checkout) 1.8 s, 4.1× its level in the hour before (440 ms), since 14:05 UTC; worst of 3 series",
    ]);
    const steady = await ask("demo_latency_p99_seconds{service={{service}}}", undefined, { service: "search" });
    expect(steady).toMatchObject([{ kind: "metric", abnormal: false }]);
    expect(answersOf(steady, window)).toEqual(["p99 latency (service=search) 300 ms, within its usual range (300 ms over the hour before)"]);
  });

  it("judges each series against its own limit series, and free space against its threshold", async () => {
    const connections = await ask("demo_db_connections", { limit: "demo_max_connections" }, {}, "connections");
    expect(connections).toMatchObject([
      {
        kind: "metric",
        abnormal: true,
        labels: { instance: "db-1:9187" },
        value: 98,
        saturation: { limit: 100, of: "demo_max_connections", direction: "up" },
        onset: new Date(SATURATED * 1000),
      },
    ]);
    expect(connections[0]?.kind === "metric" && connections[0].severity).toBeGreaterThan(SATURATION_SEVERITY);
    expect(answersOf(connections, window)).toEqual([
      "connections (instance=db-1:9187) 98 of 100 (98% of its max connections), up from 40 in the hour before, since 14:02 UTC; worst of 2 series",
    ]);
    // A hostile value cannot make the limit `vector(1)`, which every series is far above: no limit, no saturation.
    const hostile = await ask(
      "demo_db_connections",
      { limit: "demo_max_connections{instance={{instance}}}" },
      { instance: '"} or vector(1) #' },
      "connections",
    );
    expect(hostile).toMatchObject([{ kind: "metric", abnormal: true, value: 98 }]);
    expect(hostile[0]).not.toHaveProperty("saturation");
    const disk = await ask("demo_filesystem_avail_bytes", { unit: "bytes", threshold: 0, direction: "down" }, {}, "free space");
    expect(disk).toMatchObject([{ kind: "metric", value: 0, saturation: { limit: 0, direction: "down" } }]);
    expect(answersOf(disk, window)).toEqual([
      "free space (mountpoint=/data) 0 B, at or below its threshold of 0 B, down from 50 GiB in the hour before, since 14:00 UTC",
    ]);
  });

  it("answers an instant query with its values, and no series as no data", async () => {
    const instant = await evidenceOf(
      { type: "prometheus", url: prometheus.url },
      { query: "demo_latency_p99_seconds{service={{service}}}", range: false, unit: "s" },
      { title: "p99 latency", window, attributes: { service: "checkout" } },
    );
    expect(answersOf(instant, window)).toEqual(["p99 latency 1.8 s"]);
    const none = await ask("demo_latency_p99_seconds{service={{service}}}", undefined, { service: '"} or vector(1) #' });
    expect(none).toMatchObject([{ kind: "no-data", reason: "empty" }]);
    expect(answersOf(none, window)).toEqual(["p99 latency: no data in the window"]);
  });
});

describe("a Prometheus answer of another shape, read", () => {
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
      "p99 latency: +Inf s (service=b), 2 s (service=a)",
    ],
    ["a scalar", { resultType: "scalar", result: [1, "0.25"] }, "p99 latency 250 ms"],
    ["a string", { resultType: "string", result: [1, "ok"] }, "p99 latency: ok"],
    ["an empty vector", { resultType: "vector", result: [] }, "p99 latency: no data at 14:08 UTC"],
  ])("answers %s as it is", async (_case, data, expected) => {
    const server = await startTestHttpServer((_request, response) => sendJson(response, 200, { status: "success", data }));
    try {
      const found = await evidenceOf({ type: "prometheus", url: server.url }, { query: "up", range: false, unit: "s" }, { title: "p99 latency", window });
      expect(answersOf(found, window)).toEqual([expected]);
    } finally {
      await server.close();
    }
  });

  it("redacts a token a source echoes before its short answer is cut, so no half of it is left", async () => {
    // The cut at 300 characters falls inside the token as sent.
    const server = await startTestHttpServer((seen, response) =>
      sendJson(response, 400, { status: "error", errorType: "bad_data", error: `${"x".repeat(225)} ${String(seen.headers.authorization)} ${"y".repeat(100)}` }),
    );
    const dataSource = { type: "prometheus", url: server.url, auth: { bearerToken: { env: "PES_TEST_PROM_TOKEN" } } };
    try {
      const found = await evidenceOf(
        dataSource,
        { query: "up", range: true },
        { title: "p99 latency", window, env: { PES_TEST_PROM_TOKEN: "s3cret-token-0123456789" } },
      );
      const [answer] = answersOf(found, window);
      expect(answer).toHaveLength(300);
      expect(answer).toMatch(/ Bearer \[redac…$/);
      expect(JSON.stringify(found)).not.toMatch(/s3cret/);
    } finally {
      await server.close();
    }
  });
});
