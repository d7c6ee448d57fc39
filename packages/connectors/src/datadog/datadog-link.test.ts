import { describe, expect, it } from "vitest";
import { datadogAppUrl, datadogMetricsLink } from "./datadog-link.js";
import type { DatadogDataSource } from "./schema.js";

const keys = { apiKey: { env: "DD_API_KEY" }, appKey: { env: "DD_APP_KEY" } };
const at = (url: string, appUrl?: string): DatadogDataSource => ({ type: "datadog", url, ...keys, ...(appUrl === undefined ? {} : { appUrl }) });

describe("datadogAppUrl", () => {
  it.each([
    ["https://api.datadoghq.com", "https://app.datadoghq.com"],
    ["https://api.datadoghq.eu/", "https://app.datadoghq.eu"],
    ["https://api.us3.datadoghq.com", "https://us3.datadoghq.com"],
    ["https://api.us5.datadoghq.com", "https://us5.datadoghq.com"],
    ["https://api.ap1.datadoghq.com", "https://ap1.datadoghq.com"],
    ["https://api.ddog-gov.com", "https://app.ddog-gov.com"],
    ["http://127.0.0.1:8126", "http://127.0.0.1:8126"],
  ])("%s → %s", (url, app) => {
    expect(datadogAppUrl(at(url))).toBe(app);
  });

  it("takes appUrl when it is set", () => {
    expect(datadogAppUrl(at("https://dd-proxy.acme.example", "https://acme.datadoghq.eu/"))).toBe("https://acme.datadoghq.eu");
  });
});

describe("datadogMetricsLink", () => {
  const window = { start: new Date("2026-11-20T13:08:00Z"), time: new Date("2026-11-20T14:08:00Z"), end: new Date("2026-11-20T14:23:00Z") };

  it("opens the explorer on the window, without the metric's fields when the query has functions first", () => {
    const link = new URL(datadogMetricsLink(at("https://api.datadoghq.eu"), "top(avg:system.cpu.user{*} by {host}, 5, 'mean', 'desc')", window));
    expect(link.origin + link.pathname).toBe("https://app.datadoghq.eu/metric/explorer");
    expect(Object.fromEntries(link.searchParams)).toEqual({ from_ts: String(window.start.getTime()), to_ts: String(window.end.getTime()), live: "false" });
  });

  it("leaves out a scope of every tag", () => {
    const link = new URL(datadogMetricsLink(at("https://api.datadoghq.com"), "sum:nginx.requests{*}.as_count()", window));
    expect(link.searchParams.get("exp_metric")).toBe("nginx.requests");
    expect(link.searchParams.get("exp_agg")).toBe("sum");
    expect(link.searchParams.has("exp_scope")).toBe(false);
  });
});
