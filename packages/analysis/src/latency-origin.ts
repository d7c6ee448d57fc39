import type { Labels, MetricEvidence, SymptomEvidence } from "./evidence.js";
import type { Finding } from "./ranking.js";
import { labelKey } from "./series.js";
import type { ServiceGraph } from "./service-graph.js";

/** Units a latency is measured in: a metric in one of them that rose is a slowdown. */
const DURATION_UNITS = new Set(["ms", "s", "seconds", "milliseconds", "us", "µs"]);

/**
 * How close another service's slowdown may come to the slowest's (as a share of its rise) and still be
 * as likely an origin: within it, which rose more says little.
 */
const RIVAL_SHARE = 0.5;

/**
 * How far below the largest rise a service's slowdown may stay and still need explaining: an order of
 * magnitude less is a side effect (contention, retries, a few slow calls) that an origin need not cover.
 */
const MAJOR_SHARE = 0.1;

/** A slowdown: the finding of the service it is about, and how many times its normal latency it reached. */
interface Slowdown {
  finding: Finding<MetricEvidence>;
  rise: number;
}

/** What the analysis knows beyond the symptoms: who calls whom, which services the findings name, what the issue names. */
export interface OriginContext {
  graph?: ServiceGraph;
  /**
   * The graph's services some finding is about, moved or not. A caller outside them that nothing calls
   * (Tempo's `user` for browsers, a load balancer, an uninstrumented client) was never looked at: it says
   * nothing of whether it slowed.
   */
  named?: ReadonlySet<string>;
  attributes?: Labels;
}

/**
 * Where a slowdown across services begins, when nothing of a cause's kind explains it: the service whose
 * latency rose most against its own normal. A caller waits for its callees, so it is slowed by as much
 * as they are, diluted by its own work: the service that rose most is the likeliest to be where it
 * starts (not why: a saturated CPU, the network or its own code). Another within RIVAL_SHARE of its rise
 * is its rival.
 *
 * With a service graph, only a service whose slowdown explains the others is an origin (explains): every
 * service that calls it slowed too, and every major slowdown is its own, a caller's (waiting on it) or a
 * direct callee's (its calls slowed on the way). A tiny normal (half a millisecond) no longer wins by its
 * ratio alone. When none explains them all, the largest rise as before. One service slowed alone is the
 * origin when the graph knows it and the issue does not name it; without a graph it takes two (one alone
 * is the symptom itself).
 */
export function latencyOrigin(
  incident: ReadonlyArray<Finding<SymptomEvidence>>,
  { graph, named, attributes }: OriginContext = {},
): { finding: Finding<MetricEvidence>; slowed: number; byGraph: boolean; rival?: Finding<MetricEvidence> } | undefined {
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
  const explaining = graph === undefined ? [] : slowdowns.filter((slowdown) => explains(slowdown, slowdowns, graph, named ?? new Set()));
  const [slowest, next] = explaining.length > 0 ? explaining : slowdowns;
  if (slowest === undefined) return undefined;
  // Alone is one service slowed, not one that explains several: that one is named whatever the issue names.
  if (slowdowns.length === 1 && !(graph !== undefined && isUnnamed(slowest, graph, attributes))) return undefined;
  return {
    finding: slowest.finding,
    slowed: slowdowns.length,
    byGraph: explaining.length > 0,
    ...(next !== undefined && next.rise >= RIVAL_SHARE * slowest.rise ? { rival: next.finding } : {}),
  };
}

/** Whether a slowdown explains all the others by the service graph (see latencyOrigin). */
function explains(origin: Slowdown, slowdowns: readonly Slowdown[], graph: ServiceGraph, named: ReadonlySet<string>): boolean {
  const serviceOf = ({ finding }: Slowdown) => graph.serviceOf(finding.evidence.labels);
  const service = serviceOf(origin);
  if (service === undefined) return false;
  const slowed = new Set(slowdowns.map(serviceOf));
  const looked = (caller: string) => named.has(caller) || graph.callers(caller).size > 0;
  if ([...graph.callers(service)].some((caller) => looked(caller) && !slowed.has(caller))) return false;
  const [largest] = slowdowns;
  const major = slowdowns.filter(({ rise }) => rise >= MAJOR_SHARE * (largest?.rise ?? 0));
  return major.every((slowdown) => {
    const other = serviceOf(slowdown);
    return other !== undefined && (other === service || graph.reaches(other, service) || graph.callees(service).has(other));
  });
}

/** Whether a slowdown is of a service the graph knows and the attributes do not name. */
function isUnnamed({ finding }: Slowdown, graph: ServiceGraph, attributes: Labels | undefined): boolean {
  const service = graph.serviceOf(finding.evidence.labels);
  return service !== undefined && !Object.values(attributes ?? {}).includes(service);
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
