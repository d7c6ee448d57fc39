/**
 * An execution with charts, as a worker leaves it, for the API's chart and page tests: its result (with
 * alert-derived text that must come out escaped) in the fake execution client, its charts' data in a real
 * Redis through the real chart store.
 */
import { JsonText, type ChartData, type PlaybookExecutionResult } from "@pes/contracts";
import { createChartStore, type ChartStore } from "@pes/executions";
import { keySpace } from "@pes/jobs";
import { uniquePrefix } from "@pes/local-services";
import { chartPath, pagePath, signPath, type ChartFormat, signedChartPath } from "@pes/signed-links";
import type { Redis } from "ioredis";
import type { FakeExecutionClient } from "./fixtures.js";

export const LINK_SECRET = "a-link-signing-secret-of-32-chars!!";
export const EXECUTION_ID = "0b9c7f4e-1d7a-4b8e-9f51-5e6f7a8b9c0d";
/** Alert-derived text as an attacker would write it. */
export const HOSTILE = '<script>alert("x")</script><img src=https://evil.example/x.png>';

const start = Date.parse("2026-11-21T13:08:00Z");
const time = Date.parse("2026-11-21T14:08:00Z");
const end = Date.parse("2026-11-21T14:23:00Z");
const onset = Date.parse("2026-11-21T14:02:00Z");

function points(valueAt: (at: number) => number): [number, number][] {
  const all: [number, number][] = [];
  for (let at = start; at <= end; at += 60_000) all.push([at, valueAt(at)]);
  return all;
}

const connections: ChartData = {
  title: "Connections of orders-db",
  kind: "metric",
  unit: "connections",
  window: { start, time, end },
  series: [{ name: `instance="db-1:9187", note="${HOSTILE}"`, points: points((at) => (at >= onset ? 99 : 40 + ((at / 60_000) % 3) * 2)) }],
  band: { low: 40, high: 44, median: 42, until: time - 5 * 60_000 },
  onset,
  limit: { name: "pg_settings_max_connections", points: points(() => 100) },
  abnormal: true,
};

const errors: ChartData = {
  title: "Error logs of checkout",
  kind: "log-count",
  window: { start, time, end },
  series: [{ name: "matching lines", points: points((at) => (at >= onset + 60_000 ? 120 : 4)) }],
  band: { low: 3, high: 6, median: 4, until: time - 5 * 60_000 },
  onset: onset + 60_000,
  abnormal: true,
};

export const CHARTED_RESULT: PlaybookExecutionResult = {
  highlights:
    "Around 2026-11-21 14:08 UTC for service=checkout: likely cause: Connections of orders-db at its limit pg_settings_max_connections (100) since 14:02 UTC; " +
    `error logs of checkout rose 30× since 14:03 UTC. Alert said: ${HOSTILE}`,
  verdict: {
    conclusion: "cause",
    cause: { kind: "saturation", action: "Connections of orders-db", onset: "2026-11-21T14:02:00.000Z", confidence: "high" },
    symptoms: [{ kind: "log-pattern", action: "Error logs of checkout", onset: "2026-11-21T14:03:00.000Z" }],
    background: [],
    ruledOut: [],
    normal: [],
    unchecked: [{ action: "Last deploy of checkout", reason: "failed", error: `deploy API answered HTTP 502 ${HOSTILE}` }],
  },
  gadgetsHighlights: [
    { title: "Database", args: { db: "orders-db" }, highlights: "Connections of orders-db at its limit since 14:02 UTC." },
    { title: `Errors of ${HOSTILE}`, highlights: "error logs rose 30× since 14:03 UTC." },
  ],
  actionableMitigations: [
    { toolName: "Grafana", customName: "Database dashboard", url: "https://grafana.example/d/db?var-db=orders-db" },
    { toolName: "kubectl", customName: "Raise max_connections", action: { kind: "configmap.patch", name: "orders-db", note: HOSTILE } },
    { toolName: "evil", customName: "Not a link", url: "javascript:alert(1)" },
  ],
  actionResults: [
    {
      title: "Connections of orders-db",
      shortAnswer: "99 connections, at its limit (100) since 14:02 UTC",
      mostImportantLink: "https://prometheus.example/graph?g0.expr=pg",
      chartUrl: chartPath(EXECUTION_ID, 0),
    },
    {
      title: "Error logs of checkout",
      shortAnswer: `120 lines per minute, 30× — e.g. ${HOSTILE}`,
      mostImportantLink: "https://grafana.example/explore",
      chartUrl: chartPath(EXECUTION_ID, 1),
    },
    { title: "Last deploy of checkout", shortAnswer: "failed: deploy API answered HTTP 502" },
  ],
};

/** Puts the execution in the fake client (acme's) and its charts in Redis; the store reads them back. */
export async function chartedExecution(client: FakeExecutionClient, redis: Redis): Promise<Pick<ChartStore, "read">> {
  client.executions.set(EXECUTION_ID, { orgId: "acme", createdAt: new Date("2026-11-21T14:08:10Z"), outcome: JsonText.of(CHARTED_RESULT) });
  const store = createChartStore(() => redis, keySpace(uniquePrefix("api-charts"), "redis://127.0.0.1"));
  await store.keep(
    "acme",
    EXECUTION_ID,
    new Map([
      [0, connections],
      [1, errors],
    ]),
    60_000,
  );
  return store;
}

/** A signed path of the execution, for `orgId`, until `expiresAt`. */
export function signedPage(expiresAt: Date, orgId = "acme"): string {
  return signPath(LINK_SECRET, { path: pagePath(EXECUTION_ID), orgId, executionId: EXECUTION_ID }, expiresAt);
}

export function signedImage(action: number, format: ChartFormat, expiresAt: Date): string {
  return signPath(LINK_SECRET, { path: signedChartPath(EXECUTION_ID, action, format), orgId: "acme", executionId: EXECUTION_ID }, expiresAt);
}
