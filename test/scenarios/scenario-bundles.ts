import type { EvidenceBundle, Observation, PrometheusMatrixSeries } from "@pes/contracts";
import type { SyntheticSeries } from "@pes/local-services";

/**
 * A scenario's data as a bundle's range answer, without a Prometheus: the raw series a plain selector
 * (a metric's name and label values, no function) picks, evaluated as Prometheus evaluates an instant
 * vector at each step (the latest sample at most 5 minutes old). What the committed bundles hold is the
 * answer to the playbook's own query; this gives the answer to another query over the same incident, as
 * an engineer's playbook might ask it (each pod's series rather than their maximum).
 */

/** How far back Prometheus looks for a sample at an evaluation time (its default lookback delta). */
const LOOKBACK_DELTA_S = 300;

/** A plain selector: the metric's name and the values some of its labels must have. */
export interface Selector {
  name: string;
  labels: Readonly<Record<string, string>>;
}

/** The range answer of a selector over [start, end] at `stepS`, from a scenario's series. */
export function rangeAnswer(series: readonly SyntheticSeries[], selector: Selector, start: Date, end: Date, stepS: number): PrometheusMatrixSeries[] {
  const from = Math.ceil(start.getTime() / 1000);
  const to = Math.floor(end.getTime() / 1000);
  const picked = series.filter(
    ({ name, labels }) => name === selector.name && Object.entries(selector.labels).every(([label, value]) => labels?.[label] === value),
  );
  return picked.flatMap(({ name, labels, samples }) => {
    const values: Array<[number, string]> = [];
    let index = 0;
    for (let at = from; at <= to; at += stepS) {
      while (index + 1 < samples.length && (samples[index + 1] as readonly [number, number])[0] <= at) index += 1;
      const sample = samples[index];
      if (sample !== undefined && sample[0] <= at && at - sample[0] <= LOOKBACK_DELTA_S) values.push([at, String(sample[1])]);
    }
    return values.length === 0 ? [] : [{ metric: { __name__: name, ...labels }, values }];
  });
}

/**
 * The bundle with one Prometheus action's answer (and its limit's, when given) taken from a scenario's
 * series by selectors, over the action's window, at the step of its recorded answer.
 */
export function withRangeAnswer(bundle: EvidenceBundle, title: string, series: readonly SyntheticSeries[], query: Selector, limit?: Selector): EvidenceBundle {
  return {
    ...bundle,
    actions: bundle.actions.map((action) => {
      const observation = action.observation as Observation;
      if (action.title !== title || observation.kind !== "prometheus" || observation.data.resultType !== "matrix") return action;
      const [first] = [...observation.data.result];
      const stepS = first === undefined || first.values.length < 2 ? 60 : (first.values[1] as [number, string])[0] - (first.values[0] as [number, string])[0];
      const start = new Date(action.window.start);
      const end = new Date(action.window.end);
      return {
        ...action,
        observation: {
          ...observation,
          data: { resultType: "matrix" as const, result: rangeAnswer(series, query, start, end, stepS) },
          ...(limit === undefined || observation.limit === undefined
            ? {}
            : { limit: { ...observation.limit, result: rangeAnswer(series, limit, start, end, stepS) } }),
        },
      };
    }),
  };
}
