import { z } from "zod";

/**
 * What an action's chart is drawn from: the points its data source already answered (never fetched
 * again), cut down to a few hundred per series, and what the analysis judged them against. Kept once per
 * execution (beside its record, for as long) and drawn only when someone asks: an SVG or PNG is never
 * stored. Times are epoch milliseconds; a point's value is null where the series has a gap.
 */
const Point = z.tuple([z.number(), z.number().nullable()]);

export const ChartSeries = z.object({
  /** The legend: the labels that identify the series (`pod=checkout-7d9f`), or what it counts. */
  name: z.string(),
  points: z.array(Point),
});
export type ChartSeries = z.infer<typeof ChartSeries>;

export const ChartData = z.object({
  /** The action's title. */
  title: z.string(),
  /** `metric`: a metric finding's series; `log-count`: how many matching log lines per step. */
  kind: z.enum(["metric", "log-count"]),
  unit: z.string().optional(),
  /** The window the action read, and the issue time in it. */
  window: z.object({ start: z.number(), time: z.number(), end: z.number() }),
  series: z.array(ChartSeries),
  /** The usual range before the incident phase (low and high) and its median, up to when the baseline ends. */
  band: z.object({ low: z.number(), high: z.number(), median: z.number(), until: z.number() }).optional(),
  /** When the abnormal change began, and when it was over. */
  onset: z.number().optional(),
  endedAt: z.number().optional(),
  /** The threshold (a constant) or the limit series (its name and values) the metric saturates against. */
  limit: z.object({ name: z.string(), value: z.number().optional(), points: z.array(Point).optional() }).optional(),
  /** Whether the analysis judged it abnormal. */
  abnormal: z.boolean(),
});
export type ChartData = z.infer<typeof ChartData>;

/** The version of the stored charts' format this build writes. */
export const CHARTS_VERSION = 1;

/**
 * An execution's charts as stored: by the index of their action in `actionResults`. Read tolerantly
 * (unknown fields dropped): a later version only adds fields.
 */
export const ExecutionCharts = z.object({
  v: z.number().int().positive(),
  charts: z.array(z.object({ action: z.number().int().nonnegative(), chart: ChartData })),
});
export type ExecutionCharts = z.infer<typeof ExecutionCharts>;
