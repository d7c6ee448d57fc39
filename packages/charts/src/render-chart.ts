import type { ChartData } from "@pes/contracts";
import { Resvg } from "@resvg/resvg-js";
import { LineChart } from "echarts/charts";
import { GridComponent, LegendComponent, MarkAreaComponent, MarkLineComponent, TitleComponent } from "echarts/components";
import * as echarts from "echarts/core";
import { SVGRenderer } from "echarts/renderers";

// Only what a chart here uses: the line chart, its grid, legend, title and marks, drawn as SVG.
echarts.use([LineChart, GridComponent, LegendComponent, TitleComponent, MarkLineComponent, MarkAreaComponent, SVGRenderer]);

/** A chart's size in pixels: wide enough for a window's shape, small enough for a chat thread. */
export const CHART_SIZE = { width: 800, height: 320 };
/** Fonts a server has (Debian's fonts-dejavu-core in the image); a browser falls back to its sans-serif. */
const FONT_FAMILY = "DejaVu Sans, sans-serif";
const COLORS = {
  series: "#2563eb",
  band: "rgba(100, 116, 139, 0.16)",
  median: "#64748b",
  onset: "#dc2626",
  issue: "#0f172a",
  over: "#16a34a",
  limit: "#b91c1c",
};

/**
 * The chart as SVG text (ECharts' server-side rendering): the series around the issue time, the usual
 * range before the incident phase as a band with its median, the onset, the issue time and the end of the
 * change as vertical lines, the threshold or limit as a dashed line, the series' labels in the legend.
 * Every text in it (labels come from data sources and alerts) is escaped by the renderer.
 */
export function chartSvg(chart: ChartData): string {
  const instance = echarts.init(null, null, { renderer: "svg", ssr: true, ...CHART_SIZE });
  try {
    instance.setOption(optionOf(chart));
    return instance.renderToSVGString();
  } finally {
    instance.dispose();
  }
}

/** The chart as PNG (resvg, a native SVG renderer): for chat, which shows no SVG. */
export function chartPng(chart: ChartData): Buffer {
  const svg = chartSvg(chart);
  const rendered = new Resvg(svg, { background: "#ffffff", font: { loadSystemFonts: true, defaultFontFamily: "DejaVu Sans" } }).render();
  return rendered.asPng();
}

/** One line of words for a chart: its title and what it shows, for alt text and file titles. */
export function chartCaption(chart: ChartData): string {
  const series = chart.series.map((item) => item.name).join("; ");
  const what = chart.kind === "log-count" ? "log lines per step" : `${chart.unit ?? "value"}`;
  return `${chart.title}: ${what}${series === "" || series === chart.title ? "" : ` (${series})`}${chart.abnormal ? ", abnormal" : ", within its usual range"}`;
}

function optionOf(chart: ChartData): echarts.EChartsCoreOption {
  const [main, ...others] = chart.series;
  const verticals = [
    { xAxis: chart.window.time, name: "issue", lineStyle: { color: COLORS.issue, type: "dotted" as const }, label: { formatter: "issue" } },
    ...(chart.onset === undefined
      ? []
      : [
          {
            xAxis: chart.onset,
            name: "onset",
            lineStyle: { color: COLORS.onset, type: "solid" as const },
            label: { formatter: "onset", position: "insideEndTop" as const },
          },
        ]),
    ...(chart.endedAt === undefined
      ? []
      : [
          {
            xAxis: chart.endedAt,
            name: "over",
            lineStyle: { color: COLORS.over, type: "solid" as const },
            label: { formatter: "over", position: "insideEndTop" as const },
          },
        ]),
  ];
  const { band, limit } = chart;
  const threshold =
    limit?.value === undefined
      ? []
      : [
          {
            yAxis: limit.value,
            name: limit.name,
            lineStyle: { color: COLORS.limit, type: "dashed" as const },
            label: { formatter: `${limit.name} {c}`, position: "insideEndTop" as const },
          },
        ];
  const lines = [
    {
      type: "line",
      name: main?.name ?? chart.title,
      data: main?.points ?? [],
      showSymbol: false,
      connectNulls: false,
      lineStyle: { width: 2, color: COLORS.series },
      itemStyle: { color: COLORS.series },
      markLine: { symbol: "none", silent: true, label: { fontSize: 11 }, data: [...verticals, ...threshold] },
      ...(band === undefined
        ? {}
        : {
            markArea: {
              silent: true,
              itemStyle: { color: COLORS.band },
              data: [[{ coord: [chart.window.start, band.low] }, { coord: [band.until, band.high] }]],
            },
          }),
    },
    ...others.map((series) => ({ type: "line", name: series.name, data: series.points, showSymbol: false })),
    ...(limit?.points === undefined
      ? []
      : [
          {
            type: "line",
            name: limit.name,
            data: limit.points,
            showSymbol: false,
            step: "end",
            lineStyle: { type: "dashed", color: COLORS.limit },
            itemStyle: { color: COLORS.limit },
          },
        ]),
    ...(band === undefined
      ? []
      : [
          {
            type: "line",
            name: `usual range ${number(band.low)}–${number(band.high)}, median ${number(band.median)}`,
            data: [
              [chart.window.start, band.median],
              [band.until, band.median],
            ],
            showSymbol: false,
            lineStyle: { type: "dotted", color: COLORS.median },
            itemStyle: { color: COLORS.median },
          },
        ]),
  ];
  return {
    animation: false,
    useUTC: true,
    backgroundColor: "#ffffff",
    textStyle: { fontFamily: FONT_FAMILY },
    title: { text: chart.title, subtext: subtitleOf(chart), left: 12, top: 6, textStyle: { fontSize: 15 }, subtextStyle: { fontSize: 11 } },
    // One line: a long name (a series's labels) is cut here, and given whole in the chart's caption (its alt text).
    legend: { bottom: 4, left: 12, right: 12, itemWidth: 18, itemGap: 24, textStyle: { fontSize: 11, width: 240, overflow: "truncate" } },
    grid: { left: 64, right: 28, top: 64, bottom: 64 },
    xAxis: { type: "time", min: chart.window.start, max: chart.window.end, axisLabel: { fontSize: 11, hideOverlap: true } },
    yAxis: { type: "value", scale: true, axisLabel: { fontSize: 11 } },
    series: lines,
  };
}

function subtitleOf(chart: ChartData): string {
  const issue = new Date(chart.window.time).toISOString().slice(0, 16).replace("T", " ");
  const what = chart.kind === "log-count" ? "matching log lines per step" : chart.unit === undefined ? undefined : `in ${chart.unit}`;
  return [what, chart.abnormal ? "abnormal" : "within its usual range", `issue at ${issue} UTC`]
    .filter((part) => part !== undefined && part !== "")
    .join(" · ");
}

/** A number as a legend shows it: at most 3 significant digits past the integer part. */
function number(value: number): string {
  return Number.isInteger(value) ? String(value) : String(Number(value.toPrecision(3)));
}
