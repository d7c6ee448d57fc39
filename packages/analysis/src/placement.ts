import type { Labels, MetricPlacement, SymptomEvidence } from "./evidence.js";
import type { Finding, LikelyCause } from "./ranking.js";

/**
 * Where a symptom ran, when its data says: a metric's series by the node (then the zone) they carry. When
 * only the series of one node moved while the same metric on the other nodes held, the place is that
 * node, not the service: a disk saturated under one node slows the pods it hosts and no others.
 */

/** The labels that place a series, most specific first. */
export const PLACEMENT_LABELS = ["node", "zone"] as const;

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
 * A node as the likely cause: the incident's metric symptoms that a node label places are all confined to
 * the same node, and something fires or warns about that node itself (an alert with its `node` label, a
 * warning event on `node/<name>`). The node's earliest such signal or confined symptom is the finding
 * that names it; the others follow. Undefined otherwise: without the node's own signal, the symptoms
 * say where to look, not what the cause is.
 */
export function nodeCause(incident: ReadonlyArray<Finding<SymptomEvidence>>, onsetOf: (symptom: Finding<SymptomEvidence>) => number): LikelyCause | undefined {
  const confined = incident.filter(({ evidence }) => evidence.kind === "metric" && evidence.confined?.label === "node");
  const nodes = new Set(confined.map(({ evidence }) => (evidence.kind === "metric" ? evidence.confined?.value : undefined)));
  const [node] = nodes;
  if (nodes.size !== 1 || node === undefined) return undefined;
  const signals = incident.filter(({ evidence }) => isAbout(evidence, node));
  if (signals.length === 0) return undefined;
  const own = [...confined, ...signals];
  const earliest = Math.min(...own.map(onsetOf));
  // Symptoms are strongest first: of several at the same time, the strongest.
  const finding = own.find((symptom) => onsetOf(symptom) === earliest) ?? (own[0] as Finding<SymptomEvidence>);
  const followers = incident.filter((symptom) => symptom !== finding && onsetOf(symptom) >= earliest);
  const next = Math.min(...followers.map(onsetOf));
  return { basis: "node", node, finding, confined, signals, leadMs: Number.isFinite(next) ? next - earliest : 0, followers };
}

/** An alert that fires for the node (its `node` label), or a warning event on the node object. */
function isAbout(evidence: SymptomEvidence, node: string): boolean {
  if (evidence.kind === "alert") return evidence.labels?.node === node;
  if (evidence.kind === "event") return evidence.subject === `node/${node}`;
  return false;
}
