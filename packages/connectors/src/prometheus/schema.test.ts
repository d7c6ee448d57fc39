import { describe, expect, it } from "vitest";
import { PrometheusAction } from "./schema.js";

describe("PrometheusAction", () => {
  it("takes a limit query or a threshold, with the way the metric saturates", () => {
    expect(PrometheusAction.parse({ query: "pg_stat_activity_count", limit: "pg_settings_max_connections" })).toEqual({
      query: "pg_stat_activity_count",
      range: true,
      limit: "pg_settings_max_connections",
    });
    expect(PrometheusAction.parse({ query: "node_filesystem_avail_bytes", threshold: 0, direction: "down" })).toMatchObject({
      threshold: 0,
      direction: "down",
    });
    // Alone, which way is trouble: retransmissions falling to zero are relief.
    expect(PrometheusAction.parse({ query: "rate(node_netstat_Tcp_RetransSegs[1m])", direction: "up" })).toMatchObject({ direction: "up" });
  });

  it.each([
    [{ query: "x", limit: "y", threshold: 1 }, ["threshold"], "give a limit or a threshold, not both"],
    [{ query: "x", threshold: 0.9, range: false }, ["range"], "a limit or a threshold needs a range query (range: true)"],
    [{ query: "x", limit: "" }, ["limit"], undefined],
    [{ query: "x", threshold: Infinity }, ["threshold"], undefined],
    [{ query: "x", threshold: 1, direction: "sideways" }, ["direction"], undefined],
  ])("refuses %j, naming the field", (input, path, message) => {
    const result = PrometheusAction.safeParse(input);
    expect(result.success).toBe(false);
    const issue = result.error?.issues[0];
    expect(issue?.path).toEqual(path);
    if (message !== undefined) expect(issue?.message).toBe(message);
  });

  it("takes a service graph, Tempo's labels by default, any other pair named, range or instant", () => {
    const tempo = "sum by (client, server) (rate(traces_service_graph_request_total[10m]))";
    expect(PrometheusAction.parse({ query: tempo, range: false, serviceGraph: {} })).toEqual({
      query: tempo,
      range: false,
      serviceGraph: { caller: "client", callee: "server" },
    });
    expect(
      PrometheusAction.parse({ query: "istio_requests_total", serviceGraph: { caller: "source_workload", callee: "destination_workload" } }),
    ).toMatchObject({ range: true, serviceGraph: { caller: "source_workload", callee: "destination_workload" } });
    // Prometheus 3 takes UTF-8 label names, as OpenTelemetry's attributes arrive.
    expect(PrometheusAction.parse({ query: "x", serviceGraph: { caller: "client.service.name" } })).toMatchObject({
      serviceGraph: { caller: "client.service.name", callee: "server" },
    });
  });

  it.each([
    [{ query: "x", serviceGraph: {}, unit: "req/s" }, ["unit"], "a service graph (serviceGraph) reads the answer's labels, not its values: leave out unit"],
    [{ query: "x", serviceGraph: {}, limit: "y" }, ["limit"], "a service graph (serviceGraph) reads the answer's labels, not its values: leave out limit"],
    [
      { query: "x", serviceGraph: {}, threshold: 1, range: false },
      ["threshold"],
      "a service graph (serviceGraph) reads the answer's labels, not its values: leave out threshold",
    ],
    [
      { query: "x", serviceGraph: {}, direction: "up" },
      ["direction"],
      "a service graph (serviceGraph) reads the answer's labels, not its values: leave out direction",
    ],
    [{ query: "x", serviceGraph: { caller: "server" } }, ["serviceGraph", "callee"], "the caller's and the callee's labels must differ"],
    [{ query: "x", serviceGraph: { caller: "" } }, ["serviceGraph", "caller"], undefined],
    [{ query: "x", serviceGraph: { from: "client" } }, ["serviceGraph"], undefined],
    [{ query: "x", serviceGraph: true }, ["serviceGraph"], undefined],
  ])("refuses the service graph %j, naming the field", (input, path, message) => {
    const result = PrometheusAction.safeParse(input);
    expect(result.success).toBe(false);
    expect(result.error?.issues).toHaveLength(1);
    const issue = result.error?.issues[0];
    expect(issue?.path).toEqual(path);
    if (message !== undefined) expect(issue?.message).toBe(message);
  });

  it("gives back what it parsed (the worker parses a parsed action again)", () => {
    const parsed = PrometheusAction.parse({ query: "x", threshold: 0.9, unit: "ratio" });
    expect(PrometheusAction.parse(parsed)).toEqual(parsed);
    const graph = PrometheusAction.parse({ query: "x", serviceGraph: { caller: "source_workload" } });
    expect(PrometheusAction.parse(graph)).toEqual(graph);
  });
});
