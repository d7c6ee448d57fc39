import type { Evidence, Labels, ServiceCall } from "./evidence.js";

/**
 * Who calls whom among the services an execution looked at, as its service-graph actions answered (all of
 * them together: each call once). Services are known by name; a finding is about the service one of its
 * labels' values names (`service=cartservice`).
 */
export interface ServiceGraph {
  /** The services that call `service` directly. */
  callers(service: string): ReadonlySet<string>;
  /** The services `service` calls directly. */
  callees(service: string): ReadonlySet<string>;
  /** Whether `caller` calls `service`, directly or through others. */
  reaches(caller: string, service: string): boolean;
  /** The service a finding's labels are about: the first of their values the graph knows. */
  serviceOf(labels: Labels): string | undefined;
}

const NONE: ReadonlySet<string> = new Set();

/** The graph of every service-graph finding, or undefined when no action answered one (or it had no calls). */
export function serviceGraphOf(evidence: Iterable<Evidence>): ServiceGraph | undefined {
  const calls: ServiceCall[] = [];
  for (const one of evidence) if (one.kind === "service-graph") calls.push(...one.calls);
  if (calls.length === 0) return undefined;
  const callers = new Map<string, Set<string>>();
  const callees = new Map<string, Set<string>>();
  const add = (map: Map<string, Set<string>>, key: string, value: string) => map.set(key, (map.get(key) ?? new Set()).add(value));
  for (const { caller, callee } of calls) {
    // A service calling itself says nothing of where trouble travels.
    if (caller === callee) continue;
    add(callers, callee, caller);
    add(callees, caller, callee);
  }
  const known = new Set([...callers.keys(), ...callees.keys()]);
  return {
    callers: (service) => callers.get(service) ?? NONE,
    callees: (service) => callees.get(service) ?? NONE,
    reaches: (caller, service) => {
      // Breadth first from the service up through its callers; a cycle is walked once.
      const seen = new Set<string>();
      const queue = [service];
      for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
        for (const one of callers.get(next) ?? NONE) {
          if (one === caller) return true;
          if (seen.has(one)) continue;
          seen.add(one);
          queue.push(one);
        }
      }
      return false;
    },
    serviceOf: (labels) => Object.entries(labels).find(([name, value]) => name !== "__name__" && known.has(value))?.[1],
  };
}
