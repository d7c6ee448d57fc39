import { UnreadableObservationError, type DatadogMetricSeries, type LogsObservation, type Observation } from "@pes/contracts";
import { readAlertmanager } from "./alertmanager-reading.js";
import type { Evidence } from "./evidence.js";
import { readJson } from "./json-reading.js";
import { eventFindings, podFindings, rolloutFindings } from "./kubernetes-reading.js";
import { stateFindings } from "./kubernetes-state-reading.js";
import { analyzeLogs, type LogLine } from "./log-analysis.js";
import { analyzeSeries } from "./metric-analysis.js";
import { readPrometheus } from "./prometheus-reading.js";
import type { ReadingContext } from "./reading-context.js";
import type { Series } from "./series.js";

export type { ReadingContext } from "./reading-context.js";

/**
 * What an action found, read from what its source answered: the one place where observations become
 * evidence, in a worker and in a replay alike. Pure: the same observation, window and title give the same
 * evidence. An action that finds several things (alerts, events, rollouts, log patterns) gives them all,
 * strongest first; one that looked and found nothing a `none` saying what it looked for. An observation of
 * a kind this build does not know (a later version's bundle) reads as a `failed` action.
 */
export function readObservation(observation: Observation | { kind: string }, reading: ReadingContext): readonly Evidence[] {
  const cited = { action: reading.action, ...(reading.link === undefined ? {} : { link: reading.link }) };
  try {
    const found = readKnown(observation as Observation, reading);
    if (found === undefined) return [{ kind: "failed", ...cited, reason: `cannot read an observation of kind "${observation.kind}"` }];
    const list = Array.isArray(found) ? (found as readonly Evidence[]) : [found as Evidence];
    return list.length === 0 ? [{ kind: "none", ...cited, what: "findings" }] : list;
  } catch (error) {
    // Part of the answer was read only now (a large Prometheus answer is read one series at a time).
    if (error instanceof UnreadableObservationError) return [{ kind: "failed", ...cited, reason: error.message }];
    throw error;
  }
}

function readKnown(observation: Observation, reading: ReadingContext): Evidence | readonly Evidence[] | undefined {
  const cited = { action: reading.action, ...(reading.link === undefined ? {} : { link: reading.link }) };
  const none = (what: string): Evidence[] => [{ kind: "none", ...cited, what }];
  const { window } = reading;
  switch (observation.kind) {
    case "prometheus":
      return readPrometheus(observation, reading);
    case "datadog-metrics":
      return analyzeSeries(observation.series.map(datadogSeries), {
        action: reading.action,
        window,
        ...(observation.unit === undefined ? {} : { unit: observation.unit }),
        ...(reading.link === undefined ? {} : { link: reading.link }),
      });
    case "logs":
      return analyzeLogs(logInput(observation, reading.attributes), {
        action: reading.action,
        window,
        ...(reading.link === undefined ? {} : { link: reading.link }),
      });
    case "kubernetes-events": {
      const found = eventFindings(observation.items, observation.name, window, cited);
      return found.length > 0 ? found : none("warning events");
    }
    case "kubernetes-pods": {
      const found = podFindings(observation.items, observation.name, window, cited);
      return found.length > 0 ? found : none("pod restarts");
    }
    case "kubernetes-rollouts": {
      const found = rolloutFindings(observation.deployments, observation.replicaSets, window, cited);
      return found.length > 0 ? found : none("rollouts");
    }
    case "kubernetes-state": {
      const found = stateFindings(observation, window, cited);
      return found.length > 0 ? found : none("faults in the cluster's state");
    }
    case "alertmanager":
      return readAlertmanager(observation, reading);
    case "service-graph":
      return { kind: "service-graph", ...cited, calls: observation.calls };
    case "json":
      return readJson(observation, reading);
    case "text":
      return { kind: "answer", ...cited, text: observation.text };
    case "failed":
      return { kind: "failed", ...cited, reason: observation.reason, ...(observation.budget === undefined ? {} : { budget: observation.budget }) };
    case "skipped":
      return { kind: "skipped", action: reading.action, missing: observation.missing };
    default:
      return undefined;
  }
}

/**
 * A log answer's lines, each with its stream's labels. When the attributes tell some streams apart
 * (they carry more of its attribute values than the others: `app=checkout` among a namespace's streams),
 * only those are read: another service's burst is not the paged service's symptom. The counts are then
 * of other streams too, and are left out.
 */
function logInput(
  observation: LogsObservation,
  attributes: Readonly<Record<string, string>> | undefined,
): { lines: LogLine[]; totals?: Array<{ at: Date; count: number }> } {
  const values = new Set(Object.values(attributes ?? {}));
  const score = (labels: Readonly<Record<string, string>> | undefined) => Object.values(labels ?? {}).filter((value) => values.has(value)).length;
  const best = Math.max(0, ...observation.streams.map(({ labels }) => score(labels)));
  const preferred = observation.streams.filter(({ labels }) => score(labels) === best);
  const streams = best > 0 && preferred.length < observation.streams.length ? preferred : observation.streams;
  return {
    lines: streams.flatMap((stream) =>
      stream.lines.map(({ at, line }) => ({ at: new Date(at), line, ...(stream.labels === undefined ? {} : { labels: stream.labels }) })),
    ),
    ...(streams === observation.streams ? { totals: observation.counts.map(({ at, count }) => ({ at: new Date(at), count })) } : {}),
  };
}

/** A Datadog series named by its tags (`service:checkout` → service=checkout); by its scope when it has none. */
export function datadogSeries(series: DatadogMetricSeries): Series {
  const tags = series.tag_set.length > 0 ? series.tag_set : series.scope === "*" ? [] : series.scope.split(",");
  return {
    labels: Object.fromEntries(tags.map(labelOf)),
    points: series.pointlist.map(([at, value]) => ({ at, value: value ?? Number.NaN })),
  };
}

/** `key:value` as a label; the key ends at the first colon (a value may hold more). A bare tag has an empty value. */
function labelOf(tag: string): [string, string] {
  const colon = tag.indexOf(":");
  return colon === -1 ? [tag, ""] : [tag.slice(0, colon), tag.slice(colon + 1)];
}
