import type { MetricEvidence, SymptomEvidence } from "./evidence.js";
import type { Finding } from "./ranking.js";
import { labelKey } from "./series.js";

/** Units a latency is measured in: a metric in one of them that rose is a slowdown. */
const DURATION_UNITS = new Set(["ms", "s", "seconds", "milliseconds", "us", "µs"]);

/**
 * How close another service's slowdown may come to the slowest's (as a share of its rise) and still be
 * as likely an origin: within it, which rose more says little.
 */
const RIVAL_SHARE = 0.5;

/** A slowdown: the finding of the service it is about, and how many times its normal latency it reached. */
interface Slowdown {
  finding: Finding<MetricEvidence>;
  rise: number;
}

/**
 * Where a slowdown across services begins, when nothing of a cause's kind explains it: the service whose
 * latency rose most against its own normal. A caller waits for its callees, so it is slowed by as much
 * as they are, diluted by its own work: the service that rose most is the likeliest to be where it
 * starts (not why: a saturated CPU, the network or its own code). Needs at least two services slowed
 * (one alone is the symptom itself); another within RIVAL_SHARE of its rise is its rival.
 */
export function latencyOrigin(
  incident: ReadonlyArray<Finding<SymptomEvidence>>,
): { finding: Finding<MetricEvidence>; slowed: number; rival?: Finding<MetricEvidence> } | undefined {
  const bySubject = new Map<string, Slowdown>();
  for (const finding of incident) {
    const { evidence } = finding;
    if (!isSlowdown(evidence)) continue;
    const key = `${finding.upstream ?? ""}|${labelKey(evidence.labels)}`;
    const rise = evidence.value / evidence.baseline;
    const known = bySubject.get(key);
    if (known === undefined || rise > known.rise) bySubject.set(key, { finding: { ...finding, evidence }, rise });
  }
  // The strongest first; equal rises keep playbook order (Array.prototype.sort is stable).
  const slowdowns = [...bySubject.values()].sort((a, b) => b.rise - a.rise);
  const [slowest, next] = slowdowns;
  if (slowest === undefined || next === undefined) return undefined;
  return {
    finding: slowest.finding,
    slowed: slowdowns.length,
    ...(next.rise >= RIVAL_SHARE * slowest.rise ? { rival: next.finding } : {}),
  };
}

/** Whether a symptom is a latency that rose: a metric in a duration unit, abnormal and above its normal. */
export function isSlowdown(evidence: SymptomEvidence): evidence is MetricEvidence {
  return (
    evidence.kind === "metric" &&
    evidence.abnormal &&
    evidence.unit !== undefined &&
    DURATION_UNITS.has(evidence.unit) &&
    evidence.baseline > 0 &&
    evidence.value > evidence.baseline
  );
}
