import type { ServiceGraphObservation } from "@pes/contracts";

type ServiceCall = ServiceGraphObservation["calls"][number];

/** A note after a name in the tree (`redis-cart  <-- (Database)`, `frontend (Entrypoint)`), or a placeholder. */
const NOTE = /\s*(<--.*|\(.*\))$/;
/** The tree's branches before a name: `├── `, `│   └── `. */
const BRANCHES = /^[\s│├└─]*/u;

/**
 * What GetServiceDependencies answered for one service as calls: its callers (`[Upstream (Called By)]:
 * frontend, checkoutservice`, user traffic aside) and the tree under `[Downstream (Calls)]:`, each name
 * called by the one it hangs from (four columns per level). Text it does not recognise gives nothing.
 */
export function callsOfDependencies(service: string, text: string): ServiceCall[] {
  const calls: ServiceCall[] = [];
  const lines = text.split(/\r?\n/);
  for (const line of lines) {
    const callers = /^\[Upstream \(Called By\)\]:\s*(.*)$/.exec(line.trim())?.[1];
    if (callers === undefined) continue;
    for (const caller of callers.split(",").map((name) => name.trim())) if (isName(caller)) calls.push({ caller, callee: service });
  }
  const tree = lines.findIndex((line) => line.trim().startsWith("[Downstream (Calls)]"));
  if (tree < 0) return calls;
  // Each level's latest name, by depth: a name at depth d is called by the latest at depth d − 1.
  const parents: string[] = [];
  for (const line of lines.slice(tree + 1)) {
    const name = line.replace(NOTE, "").replace(BRANCHES, "").trim();
    if (!isName(name)) continue;
    const depth = Math.round((line.match(BRANCHES)?.[0].length ?? 0) / 4);
    parents[depth] = name;
    parents.length = depth + 1;
    const caller = parents[depth - 1];
    if (caller !== undefined) calls.push({ caller, callee: name });
  }
  return calls;
}

/** Every service's calls, each once: the graph the cases' dependency answers draw together. */
export function serviceGraphOfDependencies(dependencies: ReadonlyMap<string, string>): ServiceGraphObservation | undefined {
  const seen = new Map<string, ServiceCall>();
  for (const [service, text] of dependencies) for (const call of callsOfDependencies(service, text)) seen.set(`${call.caller}\u0000${call.callee}`, call);
  return seen.size === 0 ? undefined : { kind: "service-graph", calls: [...seen.values()] };
}

/** A service's name, not a placeholder such as `(None - Leaf Service)` or `(User Traffic)`. */
function isName(text: string): boolean {
  return /^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(text);
}
