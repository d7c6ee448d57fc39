import { CHANGE_EFFECT_MS, type Evidence } from "@pes/analysis";
import type { TimeWindow } from "@pes/connectors";

/**
 * How far back the engine looks for the start of a trend that was already climbing when the playbook's
 * window began: a leak that takes hours to fill a container began hours before the symptoms.
 */
export const TREND_LOOKBACK_MS = 6 * 3_600_000;

/** An action's run: its evidence, and whatever rides along with it (what it observed, over which window). */
interface Run {
  readonly evidence: readonly Evidence[];
}

/**
 * A second look, further back, when a metric's trend began before the window (`trend.beforeWindow`):
 *
 * 1. its action runs again over the last TREND_LOOKBACK_MS, which dates when the climb began (what it
 *    finds then replaces the first answer, when it dates a trend);
 * 2. the actions that report changes (`reportsChanges`) run again from CHANGE_EFFECT_MS before the
 *    earliest trend's start, so that the change that set it off, hours before the symptoms, is weighed
 *    as a cause (what they find replaces their first answer, unless they failed).
 *
 * Nothing runs again when no trend began before the window. Returns the run per action: a second run
 * that replaces the first is returned whole, so what it observed stays with its evidence.
 */
export async function lookBeforeTrends<R extends Run>(
  perAction: readonly R[],
  reportsChanges: readonly boolean[],
  window: TimeWindow,
  rerun: (index: number, window: TimeWindow) => Promise<R>,
): Promise<R[]> {
  const runs = [...perAction];
  const early = indexesWhere(runs, ({ evidence }) => evidence.some((item) => item.kind === "metric" && item.trend?.beforeWindow === true));
  if (early.length === 0) return runs;
  const { time, end } = window;
  const wide: TimeWindow = { start: new Date(Math.min(window.start.getTime(), time.getTime() - TREND_LOOKBACK_MS)), time, end };
  if (wide.start < window.start) {
    const again = await Promise.all(early.map((index) => rerun(index, wide)));
    early.forEach((index, position) => {
      const found = again[position];
      if (found?.evidence.some((item) => item.kind === "metric" && item.trend !== undefined)) runs[index] = found;
    });
  }
  const starts = runs.flatMap(({ evidence }) =>
    evidence.flatMap((item) => (item.kind === "metric" && item.trend !== undefined ? [item.trend.since.getTime()] : [])),
  );
  const from = Math.min(...starts) - CHANGE_EFFECT_MS;
  if (!(from < window.start.getTime())) return runs;
  const changes = indexesWhere(runs, (_, index) => reportsChanges[index] === true);
  const before = await Promise.all(changes.map((index) => rerun(index, { start: new Date(from), time, end })));
  changes.forEach((index, position) => {
    const found = before[position];
    if (found !== undefined && found.evidence.length > 0 && !found.evidence.every((item) => item.kind === "failed")) runs[index] = found;
  });
  return runs;
}

function indexesWhere<T>(items: readonly T[], keep: (item: T, index: number) => boolean): number[] {
  return items.flatMap((item, index) => (keep(item, index) ? [index] : []));
}
