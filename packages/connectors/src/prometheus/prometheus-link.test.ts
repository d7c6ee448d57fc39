import { describe, expect, it } from "vitest";
import type { TimeWindow } from "../connector.js";
import { prometheusLink } from "./prometheus-link.js";

const window: TimeWindow = {
  start: new Date("2026-11-21T13:08:00Z"),
  time: new Date("2026-11-21T14:08:00Z"),
  end: new Date("2026-11-21T14:23:00Z"),
};
const query = 'histogram_quantile(0.99, rate(x_bucket{service="a b&c"}[5m]))';

describe("prometheusLink", () => {
  it("opens the Prometheus graph over the window, with the filled query", () => {
    const link = prometheusLink({ type: "prometheus", url: "https://user:pw@prom.example.com/prometheus/" }, query, window);
    expect(link).toBe(
      `https://prom.example.com/prometheus/graph?g0.expr=${encodeURIComponent(query)}&g0.tab=0&g0.range_input=75m&g0.end_input=2026-11-21%2014%3A23%3A00`,
    );
    const params = new URL(link).searchParams;
    expect(params.get("g0.expr")).toBe(query);
    expect(params.get("g0.end_input")).toBe("2026-11-21 14:23:00");
  });

  it("writes the range in the largest unit that fits", () => {
    const hours: TimeWindow = { ...window, start: new Date("2026-11-21T12:23:00Z") };
    expect(new URL(prometheusLink({ type: "prometheus", url: "http://p" }, "up", hours)).searchParams.get("g0.range_input")).toBe("2h");
    const odd: TimeWindow = { ...window, end: new Date("2026-11-21T14:08:30.200Z") };
    expect(new URL(prometheusLink({ type: "prometheus", url: "http://p" }, "up", odd)).searchParams.get("g0.range_input")).toBe("3631s");
  });

  it("opens Grafana Explore when the data source names a Grafana", () => {
    const link = prometheusLink(
      { type: "prometheus", url: "http://prom:9090", grafana: { url: "https://grafana.example.com/", datasourceUid: "prom-uid", orgId: 3 } },
      query,
      window,
    );
    const url = new URL(link);
    expect(`${url.origin}${url.pathname}`).toBe("https://grafana.example.com/explore");
    expect(url.searchParams.get("schemaVersion")).toBe("1");
    expect(url.searchParams.get("orgId")).toBe("3");
    expect(JSON.parse(url.searchParams.get("panes") ?? "")).toEqual({
      a: {
        datasource: "prom-uid",
        queries: [{ refId: "A", datasource: { type: "prometheus", uid: "prom-uid" }, expr: query }],
        range: { from: String(window.start.getTime()), to: String(window.end.getTime()) },
      },
    });
  });

  it("shows the limit query beside the query, in both UIs", () => {
    const limit = 'pg_settings_max_connections{instance="db-1"}';
    const graph = new URL(prometheusLink({ type: "prometheus", url: "http://p" }, query, window, limit)).searchParams;
    expect([graph.get("g0.expr"), graph.get("g1.expr")]).toEqual([query, limit]);
    expect(graph.get("g1.range_input")).toBe("75m");
    const grafana = { url: "https://grafana.example.com", datasourceUid: "prom-uid", orgId: 1 };
    const explore = new URL(prometheusLink({ type: "prometheus", url: "http://p", grafana }, query, window, limit));
    const panes = JSON.parse(explore.searchParams.get("panes") ?? "") as { a: { queries: Array<{ refId: string; expr: string }> } };
    expect(panes.a.queries.map(({ refId, expr }) => [refId, expr])).toEqual([
      ["A", query],
      ["B", limit],
    ]);
  });
});
