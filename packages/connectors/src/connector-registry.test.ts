import { describe, expect, it } from "vitest";
import { mitigationLinksOf } from "./connector-definition.js";
import { createConnectorRegistry } from "./connector-registry.js";
import { alertmanagerConnector } from "./alertmanager/definition.js";
import { httpConnector } from "./http/definition.js";
import { prometheusConnector } from "./prometheus/definition.js";
import { connectorRegistry } from "./stock-connectors.js";

describe("connectorRegistry", () => {
  it("derives the query keys and the connector of an action from the list", () => {
    expect(connectorRegistry.types).toEqual(["prometheus", "http", "datadog", "loki", "elasticsearch", "alertmanager", "kubernetes"]);
    expect(connectorRegistry.connectorOf({ title: "t", dataSource: "m", prometheus: { query: "up" } })?.type).toBe("prometheus");
    expect(connectorRegistry.connectorOf({ title: "t", dataSource: "m", http: {} })?.type).toBe("http");
    expect(connectorRegistry.connectorOf({ title: "t", dataSource: "m" })).toBeUndefined();
    expect(connectorRegistry.connectorOf({ prometheus: {}, http: {} })).toBeUndefined();
    expect(connectorRegistry.filterPlaces).toEqual(["prometheus queries", "loki selectors", "alertmanager regex matchers"]);
  });

  it("parses a data source with its connector's schema, keeping its own fields", () => {
    const parsed = connectorRegistry.dataSource.parse({ type: "prometheus", url: "http://p", grafana: { url: "http://g", datasourceUid: "u" } });
    expect(parsed).toEqual({ type: "prometheus", url: "http://p", grafana: { url: "http://g", datasourceUid: "u", orgId: 1 } });
    const unknown = connectorRegistry.dataSource.safeParse({ type: "splunk", url: "http://s" });
    expect(unknown.error?.issues.map((issue) => issue.path)).toEqual([["type"]]);
  });

  it("knows which connectors offer which mitigation links, and binds them to a data source", () => {
    expect(connectorRegistry.typesOffering("silence")).toEqual(["alertmanager"]);
    expect(createConnectorRegistry([prometheusConnector, httpConnector]).typesOffering("silence")).toEqual([]);
    const matchers = [{ name: "service", value: 'a"b', isRegex: false, isEqual: true } as const];
    const alertmanager = { type: "alertmanager", url: "http://user:secret@am.internal:9093/", externalUrl: "https://ops:pw@am.example.com/am/" };
    expect(mitigationLinksOf(alertmanagerConnector, alertmanager).silence?.(matchers)).toBe(
      `https://am.example.com/am/#/silences/new?filter=${encodeURIComponent('{service="a\\"b"}')}`,
    );
    expect(mitigationLinksOf(alertmanagerConnector, { ...alertmanager, externalUrl: undefined }).silence?.(matchers)).toMatch(
      /^http:\/\/am\.internal:9093\/#\/silences\/new\?filter=/,
    );
    expect(mitigationLinksOf(prometheusConnector, { type: "prometheus", url: "http://p" })).toEqual({});
  });

  it("refuses two connectors of one type", () => {
    expect(() => createConnectorRegistry([prometheusConnector, httpConnector, prometheusConnector])).toThrow('two connectors of type "prometheus"');
  });
});
