import { describe, expect, it } from "vitest";
import { promqlMetricName } from "./promql-metric-name.js";

describe("promqlMetricName", () => {
  it.each([
    ["pg_settings_max_connections", "pg_settings_max_connections"],
    ['max by (db) (pg_settings_max_connections{db="orders-db"})', "pg_settings_max_connections"],
    ['sum without (container) (container_spec_memory_limit_bytes{pod=~"checkout-.*", name!=""})', "container_spec_memory_limit_bytes"],
    ['sum(kube_pod_container_resource_limits{resource="memory"}) by (pod)', "kube_pod_container_resource_limits"],
    ["max_over_time(node_filesystem_size_bytes[1h] offset 5m) * 1e3", "node_filesystem_size_bytes"],
    ['label_replace(up, "a", "$1", "b", "(.*)") * on (instance) group_left (node) node_uname_info', "up"],
    ['# the pool\nscalar(max(pgbouncer_config_max_client_connections{by="x", pool="a(b"}))', "pgbouncer_config_max_client_connections"],
  ])("finds the metric %j reads", (query, name) => {
    expect(promqlMetricName(query)).toBe(name);
  });

  it.each(["vector(100)", "100", "0x1F * 2e3", "scalar(vector(1)) and bool on (a) Inf", ""])("finds none in %j", (query) => {
    expect(promqlMetricName(query)).toBeUndefined();
  });
});
