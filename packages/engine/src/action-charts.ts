import { chartOf } from "@pes/analysis";
import type { ChartData } from "@pes/contracts";
import type { Logger } from "@pes/logger";
import type { PlannedAction } from "./plan.js";
import type { WindowedRun } from "./run.js";

/**
 * The data of each action's chart, from what it observed over the window it ran (a look-back's wider one
 * included) and its evidence, with the data source's secrets redacted from its texts. A chart that cannot
 * be made is logged and left out: it never costs the execution.
 */
export function chartsOf(planned: readonly PlannedAction[], runs: readonly WindowedRun[], logger: Logger): Map<number, ChartData> {
  const charts = new Map<number, ChartData>();
  runs.forEach((run, index) => {
    const title = planned[index]?.title;
    if (run.observed === undefined || title === undefined) return;
    const { observation, redact } = run.observed;
    try {
      const chart = chartOf(observation, run.evidence, { action: title, window: run.window });
      if (chart !== undefined) charts.set(index, redactedChart(chart, redact));
    } catch (error) {
      logger.warn({ err: error, action: title }, "could not make the action's chart");
    }
  });
  return charts;
}

function redactedChart(chart: ChartData, redact: (text: string) => string): ChartData {
  return {
    ...chart,
    title: redact(chart.title),
    series: chart.series.map((series) => ({ ...series, name: redact(series.name) })),
    ...(chart.limit === undefined ? {} : { limit: { ...chart.limit, name: redact(chart.limit.name) } }),
  };
}
