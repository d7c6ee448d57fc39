import { quantityOf } from "@pes/analysis";
import { type BundleAction, type Deployment, EVIDENCE_BUNDLE_VERSION, EvidenceBundle } from "@pes/contracts";
import { alertsObservation } from "./alerts-file.js";
import { type CaseFiles, readCaseFiles } from "./case-files.js";
import { serviceGraphOfDependencies } from "./dependencies-text.js";
import { clusterState } from "./cluster-state.js";
import { localDate, zoneOfDescribeDates } from "./kubectl-text.js";
import { type MetricSeries, metricObservation, readMetricsCsv } from "./metrics-file.js";

/** The playbook name a converted case's issue carries: one generic investigation for every case. */
export const BOOK_NAME = "cloud-opsbench";
/** How far back the cluster state's and the alerts' window starts before the collection. */
const LOOKBACK_MS = 60 * 60_000;

/** A case converted: its bundle, and what could not be read. */
export interface ConvertedCase {
  bundle: EvidenceBundle;
  notes: string[];
}

/**
 * A Cloud-OpsBench case directory as the evidence bundle an execution would have recorded on that
 * cluster: one action for the namespace's state (kubernetes-state), one for the alerts when there are
 * any (alertmanager), one per metric series (prometheus). The issue's time is when its first alert fired,
 * as an alerting pipeline would page, else the collection's.
 */
export function convertCase(directory: string, id: string, options: { apiOnly?: boolean } = {}): ConvertedCase {
  const files = readCaseFiles(directory);
  // The node services' systemctl status is no part of what the API holds: left out on request.
  return bundleOfFiles(options.apiOnly === true ? { ...files, nodeServices: [] } : files, id);
}

/** The zone of the case's local times: that of its describe dates (kubectl prints the cluster's). */
function zoneOf(files: CaseFiles): string {
  for (const byName of files.describe.values()) {
    for (const text of byName.values()) {
      const zone = zoneOfDescribeDates(text);
      if (zone !== undefined) return zone;
    }
  }
  return "+00:00";
}

export function bundleOfFiles(files: CaseFiles, id: string): ConvertedCase {
  const notes: string[] = [];
  const namespace = files.namespaces[0] ?? "default";
  const zone = zoneOf(files);
  const collected = files.collectionTimestamp === undefined ? undefined : localDate(files.collectionTimestamp, zone);
  if (collected === undefined) notes.push("no collection_timestamp: the epoch stands for it");
  const collectedAt = new Date(collected ?? 0);
  const alerts = alertsObservation(files.alerts, namespace, zone, collectedAt);
  // The issue is paged when its first alert fired (an alerting pipeline calls then), else when the case was collected.
  const firstAlert = Math.min(...(alerts?.alerts ?? []).map((alert) => Date.parse(alert.startsAt)).filter((at) => at <= collectedAt.getTime()));
  const time = new Date(Number.isFinite(firstAlert) ? firstAlert : collectedAt.getTime()).toISOString();
  const collection = collectedAt.toISOString();
  const window = { start: new Date(collectedAt.getTime() - LOOKBACK_MS).toISOString(), time, end: collection };

  const state = clusterState(files, { namespace, collectedAt, zone });
  notes.push(...state.notes);
  const actions: BundleAction[] = [{ gadget: "Kubernetes", title: "Cluster state", connector: "kubernetes", window, observation: state.observation }];

  if (alerts !== undefined) actions.push({ gadget: "Alerts", title: "Alerts", connector: "alertmanager", window, observation: alerts });
  // Who calls whom, as a tracing backend's service graph would answer.
  const graph = serviceGraphOfDependencies(files.dependencies);
  if (graph !== undefined) actions.push({ gadget: "Services", title: "Service graph", connector: "tempo", window, observation: graph });

  if (files.metricsCsv !== undefined) {
    const nodeNames = new Set((state.observation.nodes ?? []).map((node) => node.metadata.name));
    for (const series of readMetricsCsv(files.metricsCsv, zone, nodeNames)) {
      const first = (series.samples[0]?.[0] ?? collectedAt.getTime() / 1000) * 1000;
      const last = (series.samples.at(-1)?.[0] ?? collectedAt.getTime() / 1000) * 1000;
      actions.push({
        gadget: `Metrics of ${series.entity}`,
        title: `Metrics of ${series.entity}: ${series.metric}`,
        connector: "prometheus",
        // The series span a few minutes before the collection: the window is theirs, so that the
        // analysis has a baseline before the incident phase.
        window: {
          start: new Date(Math.min(first, collectedAt.getTime())).toISOString(),
          time,
          end: new Date(Math.max(last, collectedAt.getTime())).toISOString(),
        },
        observation: metricObservation(series, namespace, limitOf(series, state.observation.deployments ?? []) ?? declaredOf(series)),
      });
    }
  }

  const bundle = EvidenceBundle.parse({
    v: EVIDENCE_BUNDLE_VERSION,
    executionId: id,
    recordedAt: collection,
    issue: { bookName: BOOK_NAME, ...(files.query === undefined ? {} : { title: files.query }), time, attributes: { namespace } },
    actions,
    mitigations: [],
  });
  return { bundle, notes };
}

/** The resources a service's metric is measured against: its `cpu` (cores) and `mem` (bytes) columns. */
const LIMITED_RESOURCES: Record<string, { resource: string; name: string }> = {
  cpu: { resource: "cpu", name: "cpu limit" },
  mem: { resource: "memory", name: "memory limit" },
};

/**
 * The limit a service's cpu or memory series saturates against, as a playbook would ask for it next to
 * the usage: the sum of its Deployment's containers' limits (one pod each here), when every container
 * has one. `undefined` for a node's series, another metric, or an app without limits.
 */
function limitOf(series: MetricSeries, deployments: readonly Deployment[]): { name: string; value: number } | undefined {
  const limited = LIMITED_RESOURCES[series.metric];
  if (series.node || limited === undefined) return undefined;
  const deployment = deployments.find((candidate) => candidate.metadata.name === series.entity);
  const containers = deployment?.spec.template.spec.containers ?? [];
  if (containers.length === 0) return undefined;
  let total = 0;
  for (const container of containers) {
    const value = quantityOf(container.resources?.limits?.[limited.resource]);
    if (value === undefined) return undefined;
    total += value;
  }
  return { name: limited.name, value: total };
}

/**
 * CPU throttling (`cpu_cfs`, seconds throttled per second) saturates at a quarter: the container waited
 * for its CPU quota a quarter of the time, kube-prometheus's CPUThrottlingHigh condition, as a playbook
 * would declare it beside the usage.
 */
const THROTTLED_SHARE = 0.25;

/** Metrics that go up in trouble with no level to saturate at: a node's TCP retransmissions falling is relief. */
const WORSENING_UPWARD = new Set(["tcp_retans"]);

/** What a series without a limit is read against, as a playbook would declare it: a threshold, or which way is trouble. */
function declaredOf(series: MetricSeries): { threshold: number } | { direction: "up" } | undefined {
  if (!series.node && series.metric === "cpu_cfs") return { threshold: THROTTLED_SHARE };
  return WORSENING_UPWARD.has(series.metric) ? { direction: "up" } : undefined;
}

/** The bundle of a case that could not be read: no action, so no finding. */
export function emptyBundle(id: string): EvidenceBundle {
  const time = new Date(0).toISOString();
  return { v: EVIDENCE_BUNDLE_VERSION, executionId: id, recordedAt: time, issue: { bookName: BOOK_NAME, time, attributes: {} }, actions: [], mitigations: [] };
}
