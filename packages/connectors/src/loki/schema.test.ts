import { describe, expect, it } from "vitest";
import { LokiAction, LokiDataSource } from "./schema.js";

describe("LokiDataSource", () => {
  it("accepts a tenant, several tenants, a Grafana and auth", () => {
    const parsed = LokiDataSource.parse({
      type: "loki",
      url: "https://loki.example",
      tenant: "team-a|team_b",
      grafana: { url: "https://grafana.example", datasourceUid: "loki" },
      auth: { basic: { username: "reader", password: { env: "LOKI_PASSWORD" } } },
    });
    expect(parsed.grafana?.orgId).toBe(1);
  });

  it.each(["", "a b", "acme\r\nX-Injected: 1", "a/b", "x".repeat(151)])("refuses the tenant %j", (tenant) => {
    expect(LokiDataSource.safeParse({ type: "loki", url: "https://loki.example", tenant }).success).toBe(false);
  });
});

describe("LokiAction", () => {
  it("defaults to 1000 lines per phase", () => {
    expect(LokiAction.parse({ selector: "{app={{service}}}" })).toEqual({ selector: "{app={{service}}}", limit: 1000 });
  });

  it.each([
    [{ selector: 'rate({app="x"}[5m])' }, "selector must be a LogQL log query: a stream selector {…}, then any filters"],
    [{ selector: "{app={{service}}}", limit: 5001 }, "Too big: expected number to be <=5000"],
    [{ selector: "{app={{service}}}", limit: 0 }, "Too small: expected number to be >=1"],
  ])("refuses %j", (action, message) => {
    const parsed = LokiAction.safeParse(action);
    expect(parsed.error?.issues.map((issue) => issue.message)).toEqual([message]);
  });
});
