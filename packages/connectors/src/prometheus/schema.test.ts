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

  it("gives back what it parsed (the worker parses a parsed action again)", () => {
    const parsed = PrometheusAction.parse({ query: "x", threshold: 0.9, unit: "ratio" });
    expect(PrometheusAction.parse(parsed)).toEqual(parsed);
  });
});
