import { mkdir, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { ChartData } from "@pes/contracts";
import { describe, expect, it } from "vitest";
import { chartCaption, chartPng, chartSvg } from "./render-chart.js";

/** Where the pictures go to be looked at after a run (gitignored). */
const ARTIFACTS = fileURLToPath(new URL("../test-artifacts/", import.meta.url));

const start = Date.parse("2026-11-21T13:08:00Z");
const time = Date.parse("2026-11-21T14:08:00Z");
const end = Date.parse("2026-11-21T14:23:00Z");
const onset = Date.parse("2026-11-21T14:02:00Z");

function points(valueAt: (at: number) => number): [number, number][] {
  const all: [number, number][] = [];
  for (let at = start; at <= end; at += 60_000) all.push([at, valueAt(at)]);
  return all;
}

const saturated: ChartData = {
  title: "Connections of orders-db",
  kind: "metric",
  unit: "connections",
  window: { start, time, end },
  series: [{ name: 'instance="db-1:9187"', points: points((at) => (at >= onset ? 99 : 40 + ((at / 60_000) % 3) * 2)) }],
  band: { low: 40, high: 44, median: 42, until: time - 5 * 60_000 },
  onset,
  limit: { name: "pg_settings_max_connections", points: points(() => 100) },
  abnormal: true,
};

describe("chartSvg", () => {
  it("draws the series with its labels in the legend, the usual range, the onset, the issue time and the limit", () => {
    const svg = chartSvg(saturated);
    expect(svg.startsWith("<svg")).toBe(true);
    for (const text of ["Connections of orders-db", "instance=&quot;db-1:9187&quot;", "usual range", "onset", "issue", "pg_settings_max_connections"]) {
      expect(svg).toContain(text);
    }
  });

  it("escapes every text: labels and titles come from data sources and alerts", () => {
    const hostile = '<script>alert(1)</script><a href="javascript:x">&';
    const svg = chartSvg({
      ...saturated,
      title: hostile,
      series: [{ name: hostile, points: saturated.series[0]?.points ?? [] }],
      limit: { name: hostile, value: 90 },
    });
    expect(svg).not.toContain("<script");
    expect(svg).not.toContain("<a ");
    expect(svg).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
  });
});

describe("chartPng", () => {
  it("renders a PNG of the chart's size", async () => {
    const png = chartPng(saturated);
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    // IHDR: width and height, big-endian, at bytes 16-23.
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([800, 320]);
    await mkdir(ARTIFACTS, { recursive: true });
    await writeFile(`${ARTIFACTS}saturated-metric.png`, png);
    const logs = chartPng({
      title: "Error logs of checkout",
      kind: "log-count",
      window: { start, time, end },
      series: [{ name: "matching lines", points: points((at) => (at >= onset ? 120 : 4)) }],
      band: { low: 3, high: 6, median: 4, until: time - 5 * 60_000 },
      onset,
      abnormal: true,
    });
    await writeFile(`${ARTIFACTS}log-count.png`, logs);
  });
});

describe("chartCaption", () => {
  it("says what the chart shows in one line", () => {
    expect(chartCaption(saturated)).toBe('Connections of orders-db: connections (instance="db-1:9187"), abnormal');
  });
});
