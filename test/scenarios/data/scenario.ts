import type { FakeDocument, PostableAlert, SyntheticSeries } from "@pes/local-services";
import type { TimedLine } from "./synthetic.js";

/**
 * One incident as data for every source the `shop` organization queries, in the shapes those tools
 * speak, plus the request an on-call engineer would send and what a right answer must say.
 */
export interface Scenario {
  name: string;
  /**
   * The issue time: a whole minute about 10 minutes before now (Alertmanager only serves alerts still
   * firing). The data runs to 15 minutes after it, a little into the future, so that the window, which
   * ends at now, never reaches past the last sample however long the servers take to start.
   */
  issueAt: Date;
  /** What is asked: a title that picks the playbook and captures attributes, or a playbook by name. */
  request: { title: string; attributes?: Record<string, string> };
  data: ScenarioData;
}

export interface ScenarioData {
  /** Prometheus history (backfilled). */
  series: SyntheticSeries[];
  /** Alerts for Alertmanager's `POST /api/v2/alerts`: firing ones start in the past and end in the future. */
  alerts: PostableAlert[];
  /** Loki streams. */
  logStreams: LogStream[];
  /** Elasticsearch documents. */
  documents: FakeDocument[];
  /** What the Kubernetes API server holds. */
  kubernetes: KubernetesObjects;
}

/** A Loki stream: its labels and its lines. */
export interface LogStream {
  labels: Record<string, string>;
  entries: TimedLine[];
}

/** Kubernetes objects as the API server returns them in a list's `items` (apps/v1 and core/v1). */
export interface KubernetesObjects {
  deployments: KubernetesObject[];
  replicaSets: KubernetesObject[];
  pods: KubernetesObject[];
  events: KubernetesObject[];
}

/** A Kubernetes object: at least `metadata` with a name and (for these kinds) a namespace. */
export type KubernetesObject = { metadata: { name: string; namespace: string } & Record<string, unknown> } & Record<string, unknown>;
