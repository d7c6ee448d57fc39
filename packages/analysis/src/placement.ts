import type { Labels, MetricPlacement, SymptomEvidence } from "./evidence.js";

/**
 * Where a symptom ran, when its data says: a metric's series by the node (then the zone) they carry. When
 * only the series of one node moved while the same metric on the other nodes held, the place is that
 * node, not the service: a disk saturated under one node slows the pods it hosts and no others.
 */

/**
 * The labels that place a series, most specific first. A node's own series (node-exporter's) name it by
 * their target, `instance` (`node-2:9100`): nodeCause maps that to the node (nodeOfPlacement).
 */
export const PLACEMENT_LABELS = ["node", "zone", "instance"] as const;

/**
 * The node (or zone) the abnormal series are confined to: every abnormal series carries the same value
 * of the label, and series with another value of it were judged and found normal. Undefined when none is
 * abnormal, when one of them lacks the label, or when no series elsewhere shows the rest held.
 */
export function confinedTo(series: ReadonlyArray<{ labels: Labels; abnormal: boolean }>): MetricPlacement | undefined {
  const abnormal = series.filter((item) => item.abnormal);
  if (abnormal.length === 0) return undefined;
  for (const label of PLACEMENT_LABELS) {
    const values = new Set(abnormal.map((item) => item.labels[label]));
    const [value] = values;
    if (values.size !== 1 || value === undefined) continue;
    const elsewhere = series.filter((item) => item.labels[label] !== undefined && item.labels[label] !== value);
    if (elsewhere.length > 0) return { label, value, abnormal: abnormal.length, of: series.length };
  }
  return undefined;
}

/**
 * A node as the likely cause, in the shape of ranking.ts' LikelyCause (its `node` basis), over any finding
 * that carries a symptom: placement reads evidence only, and ranking.ts imports it, not the other way.
 */
export interface NodeCause<F extends { evidence: SymptomEvidence }> {
  basis: "node";
  node: string;
  finding: F;
  confined: F[];
  signals: F[];
  leadMs: number;
  followers: F[];
}

/**
 * A node as the likely cause: the incident's metric symptoms that a node label places are all confined to
 * the same node, and something fires or warns about that node itself (an alert with its `node` label, a
 * warning event on `node/<name>`). The node's earliest such signal or confined symptom is the finding
 * that names it; the others follow. Undefined otherwise: without the node's own signal, the symptoms
 * say where to look, not what the cause is.
 */
export function nodeCause<F extends { evidence: SymptomEvidence }>(incident: readonly F[], onsetOf: (symptom: F) => number): NodeCause<F> | undefined {
  const known = namedNodes(incident);
  const nodeOf = ({ evidence }: F) => (evidence.kind === "metric" && evidence.confined !== undefined ? nodeOfPlacement(evidence.confined, known) : undefined);
  const confined = incident.filter((symptom) => nodeOf(symptom) !== undefined);
  const nodes = new Set(confined.map(nodeOf));
  const [node] = nodes;
  if (nodes.size !== 1 || node === undefined) return undefined;
  const signals = incident.filter(({ evidence }) => isAbout(evidence, node));
  if (signals.length === 0) return undefined;
  const own = [...confined, ...signals];
  const earliest = Math.min(...own.map(onsetOf));
  // Symptoms are strongest first: of several at the same time, the strongest.
  const finding = own.find((symptom) => onsetOf(symptom) === earliest) ?? (own[0] as F);
  const followers = incident.filter((symptom) => symptom !== finding && onsetOf(symptom) >= earliest);
  const next = Math.min(...followers.map(onsetOf));
  return { basis: "node", node, finding, confined, signals, leadMs: Number.isFinite(next) ? next - earliest : 0, followers };
}

/**
 * An alert that fires for the node (its `node` label, or without one, its `instance` on the node:
 * node-exporter's alerts name their target), or a warning event on the node object.
 */
function isAbout(evidence: SymptomEvidence, node: string): boolean {
  if (evidence.kind === "alert") return evidence.labels?.node === undefined ? hostOf(evidence.labels?.instance) === node : evidence.labels.node === node;
  if (evidence.kind === "event") return evidence.subject === `node/${node}`;
  return false;
}

/**
 * The node a placement names: a `node` label's value, or the host of an `instance` placement
 * (`node-2:9100`) when the incident names that host as a node (nodes named in the incident, namedNodes):
 * a database's `db-1:9187` is no node.
 */
function nodeOfPlacement(placement: MetricPlacement, known: ReadonlySet<string>): string | undefined {
  if (placement.label === "node") return placement.value;
  const host = placement.label === "instance" ? hostOf(placement.value) : undefined;
  return host !== undefined && known.has(host) ? host : undefined;
}

/** The nodes the incident names: by `node` labels, warning events on `node/<name>`, and the targets of alerts without a node label. */
function namedNodes(incident: ReadonlyArray<{ evidence: SymptomEvidence }>): Set<string> {
  const names = new Set<string>();
  for (const { evidence } of incident) {
    if (evidence.kind === "metric" && evidence.confined?.label === "node") names.add(evidence.confined.value);
    if (evidence.kind === "metric" && evidence.labels.node !== undefined) names.add(evidence.labels.node);
    if (evidence.kind === "alert" && evidence.labels?.node !== undefined) names.add(evidence.labels.node);
    const host = evidence.kind === "alert" && evidence.labels?.node === undefined ? hostOf(evidence.labels?.instance) : undefined;
    if (host !== undefined) names.add(host);
    if (evidence.kind === "event" && evidence.subject.startsWith("node/")) names.add(evidence.subject.slice("node/".length));
  }
  return names;
}

/** The host of a scrape target written `host:port`; undefined for anything else (a URL, a bare name). */
function hostOf(instance: string | undefined): string | undefined {
  const match = instance === undefined ? null : /^([A-Za-z0-9][A-Za-z0-9.-]*):\d+$/.exec(instance);
  return match?.[1];
}
