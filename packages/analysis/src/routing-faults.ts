import type { Service } from "@pes/contracts";
import { containersOf, labelText, selects, someOf, type ClusterIndex, type Fault, type Workload } from "./cluster-index.js";

/**
 * Why a Service reaches nothing: its selector matches no pod (while a workload's pods carry labels close
 * to it), its targetPort is no port its pods serve, or its protocol is not theirs. A Service without a
 * selector (endpoints kept by hand) is not judged.
 */
export function serviceFaults(index: ClusterIndex): Fault[] {
  const faults: Fault[] = [];
  const workloads = [...index.workloads.values()];
  for (const service of index.state.services ?? []) {
    const selector = service.spec.selector ?? {};
    if (Object.keys(selector).length === 0) continue;
    const name = service.metadata.name;
    const selected = workloads.filter((workload) => selects(selector, workload.labels) || workload.pods.some((pod) => selects(selector, pod.metadata.labels)));
    if (selected.length === 0) {
      const near = workloads.find(
        (workload) =>
          workload.name === name ||
          Object.entries(workload.labels).some(([key, value]) => key in selector && value !== selector[key] && similar(value, selector[key] ?? "")),
      );
      if (near === undefined) continue;
      faults.push({
        subject: `service/${name}`,
        mechanism: "service/no-endpoints",
        detail: `selector ${labelText(selector)} matches no pod; ${near.ref}'s pods are labelled ${labelText(near.labels)}`,
        remedy: `Fix the selector of service/${name} to ${labelText(pick(near.labels, Object.keys(selector)))} (the labels of ${near.ref}'s pods)`,
        certainty: "decisive",
        affects: [near.ref],
      });
      continue;
    }
    const fault = portFault(service, selected);
    if (fault !== undefined) faults.push(fault);
  }
  return faults;
}

function pick(labels: Readonly<Record<string, string>>, keys: readonly string[]): Record<string, string> {
  const picked = Object.fromEntries(keys.flatMap((key) => (labels[key] === undefined ? [] : [[key, labels[key]]])));
  return Object.keys(picked).length > 0 ? picked : { ...labels };
}

/** A Service port whose targetPort its pods do not serve, or whose protocol differs from theirs. */
function portFault(service: Service, selected: readonly Workload[]): Fault | undefined {
  const name = service.metadata.name;
  const served = selected.flatMap((workload) => workload.spec?.containers.flatMap((container) => container.ports ?? []) ?? []);
  if (served.length === 0) return undefined;
  const affects = selected.map((workload) => workload.ref);
  for (const port of service.spec.ports ?? []) {
    const target = port.targetPort ?? port.port;
    const matching = served.filter((one) => (typeof target === "number" ? one.containerPort === target : one.name === target));
    if (matching.length === 0) {
      return {
        subject: `service/${name}`,
        mechanism: "service/wrong-target-port",
        detail: `port ${port.port} → targetPort ${target}; the pods serve ${[...new Set(served.map((one) => one.containerPort))].join(", ")}`,
        remedy: `Set targetPort of service/${name}'s port ${port.port} to ${served[0]?.containerPort}`,
        certainty: "decisive",
        affects,
      };
    }
    const protocol = port.protocol ?? "TCP";
    const theirs = matching[0]?.protocol ?? "TCP";
    if (protocol !== theirs) {
      return {
        subject: `service/${name}`,
        mechanism: "service/wrong-protocol",
        detail: `port ${port.port} is ${protocol}; the pods serve ${target} over ${theirs}`,
        remedy: `Set the protocol of service/${name}'s port ${port.port} to ${theirs}`,
        certainty: "decisive",
        affects,
      };
    }
  }
  return undefined;
}

/** Whether two names are one slip apart: one holds the other, or they differ by a couple of characters. */
export function similar(a: string, b: string): boolean {
  if (a === b || a.length < 3 || b.length < 3) return false;
  if (a.startsWith(b) || b.startsWith(a) || a.endsWith(b) || b.endsWith(a)) return true;
  return editDistance(a, b) <= 2;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

const ADDRESS = /^(?:[a-z][a-z0-9+.-]*:\/\/)?(?:[^@/]*@)?([a-z0-9]([a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9-]+)*):(\d{1,5})(?:\/.*)?$/i;

/**
 * A workload that calls a dependency in its namespace at an address that is no Service: an environment
 * variable naming a host that is one slip from a Service's name (`redis-cart-invalid:6379` beside
 * `redis-cart`), or a Service's name with a port it does not serve; decisive when the container's own log
 * names that address failing, else suggestive.
 */
export function addressFaults(index: ClusterIndex): Fault[] {
  const services = index.state.services;
  if (services === undefined || services.length === 0) return [];
  const names = new Map(services.map((service) => [service.metadata.name, service]));
  const faults: Fault[] = [];
  for (const workload of index.workloads.values()) {
    for (const container of containersOf(workload.spec)) {
      for (const variable of container.env ?? []) {
        const match = ADDRESS.exec(variable.value ?? "");
        if (match === null) continue;
        const host = shortHost(match[1] ?? "", index.namespace);
        if (host === undefined) continue;
        const port = Number(match[3]);
        const service = names.get(host);
        const near = service === undefined ? [...names.keys()].find((name) => similar(name, host)) : undefined;
        const wrongPort = service !== undefined && (service.spec.ports ?? []).length > 0 && !(service.spec.ports ?? []).some((one) => one.port === port);
        if (near === undefined && !wrongPort) continue;
        const named = logsNaming(index, workload, host);
        faults.push({
          subject: workload.ref,
          mechanism: "dependency/wrong-address",
          detail: `${container.name} env ${variable.name}=${variable.value}${near === undefined ? `: service/${host} serves ${(service?.spec.ports ?? []).map((one) => one.port).join(", ")}` : `: no Service ${host} (service/${near} exists)`}${named === undefined ? "" : `; log: "${named}"`}`,
          remedy: `Set ${variable.name} of ${workload.ref} to ${near ?? host}:${near === undefined ? (service?.spec.ports?.[0]?.port ?? port) : (names.get(near)?.spec.ports?.[0]?.port ?? port)}`,
          certainty: named === undefined ? "suggestive" : "decisive",
          affects: [workload.ref],
        });
      }
    }
  }
  return faults;
}

/** A host in the namespace by its Service name: `cart`, `cart.shop`, `cart.shop.svc`, `cart.shop.svc.cluster.local`; undefined for another. */
function shortHost(host: string, namespace: string): string | undefined {
  const parts = host.toLowerCase().split(".");
  if (parts.length === 1) return parts[0];
  if (parts[1] !== namespace) return undefined;
  return parts.length === 2 || parts[2] === "svc" ? parts[0] : undefined;
}

function logsNaming(index: ClusterIndex, workload: Workload, host: string): string | undefined {
  const pods = new Set(workload.pods.map((pod) => pod.metadata.name));
  const lines = (index.state.containerLogs ?? []).filter((log) => pods.has(log.pod) || log.pod === workload.name).flatMap((log) => log.lines);
  const line = lines.find((one) => one.includes(host) && FAILING.test(one));
  return line === undefined ? undefined : cut(line);
}

const FAILING = /error|fail|refused|unable|cannot|could not|timed? ?out|no such host|unknown host|not known|exception/i;

function cut(line: string, most = 200): string {
  const flat = line.replace(/\s+/g, " ").trim();
  const at = flat.search(FAILING);
  const from = at > 80 ? at - 60 : 0;
  const part = flat.slice(from, from + most);
  return `${from > 0 ? "…" : ""}${part}${from + most < flat.length ? "…" : ""}`;
}

/** How the workloads with a fault of their own are called: their names, their Services' names and cluster IPs. */
function explainedNames(index: ClusterIndex, explained: ReadonlySet<string>): string[] {
  const workloads = [...index.workloads.values()].filter((workload) => explained.has(workload.ref));
  const services = (index.state.services ?? []).filter(
    (service) => explained.has(`service/${service.metadata.name}`) || workloads.some((workload) => selects(service.spec.selector ?? {}, workload.labels)),
  );
  return [
    ...workloads.map((workload) => workload.name),
    ...services.flatMap((service) => [
      service.metadata.name,
      ...(service.spec.clusterIP === undefined || service.spec.clusterIP === "None" ? [] : [`${service.spec.clusterIP}:`]),
    ]),
  ].filter((name) => name.length >= 3);
}

const LOG_MECHANISMS: ReadonlyArray<[RegExp, string, string]> = [
  [
    /password authentication failed|access denied for user|authentication failed|invalid credentials|wrongpass|NOAUTH/i,
    "dependency/credentials",
    "Fix the credentials {workload} uses for its dependency (the Secret it reads)",
  ],
  [
    /too many (clients|connections)|remaining connection slots|connection pool (is )?exhausted|pool exhausted|max_connections|no connection became available/i,
    "dependency/connections-exhausted",
    "Free connections for {workload}: a smaller pool per pod, fewer idle connections, or a higher limit on the dependency",
  ],
  [
    /read-only (transaction|replica|file system|mode)|READONLY You can't write/i,
    "dependency/read-only",
    "Point {workload} at a writable primary of its dependency",
  ],
  [
    /no such host|unknown host|name or service not known|could not resolve|temporary failure in name resolution|UnknownHostException|getaddrinfo ENOTFOUND/i,
    "dependency/unknown-host",
    "Fix the host name {workload} uses for its dependency",
  ],
  [/connection refused|ECONNREFUSED/i, "dependency/connection-refused", "Check that the dependency {workload} calls is up on the port it uses"],
];

/**
 * What a troubled workload's own logs say of its dependencies: credentials refused, connections
 * exhausted, read-only, a name that does not resolve, a connection refused; suggestive (a log line says
 * so, the state does not), quoted. Workloads whose pods all run and are ready are read too: a service can
 * be up and failing every call.
 */
export function logFaults(index: ClusterIndex, explained: ReadonlySet<string>): Fault[] {
  const faults: Fault[] = [];
  const names = explainedNames(index, explained);
  // A line naming a dependency whose own fault is known says only that it fails its callers.
  const unexplained = (line: string) => !names.some((name) => line.includes(name));
  for (const workload of index.workloads.values()) {
    if (explained.has(workload.ref)) continue;
    const pods = new Set(workload.pods.map((pod) => pod.metadata.name));
    const lines = (index.state.containerLogs ?? []).filter((log) => pods.has(log.pod) || log.pod === workload.name).flatMap((log) => log.lines);
    if (lines.length === 0) continue;
    for (const [pattern, mechanism, remedy] of LOG_MECHANISMS) {
      const hits = lines.filter((line) => pattern.test(line) && unexplained(line));
      // One line may be a blip; a pattern that holds the logs is the container's trouble.
      if (hits.length < 3) continue;
      const line = hits.at(-1) ?? "";
      faults.push({
        subject: workload.ref,
        mechanism,
        detail: `${hits.length} of its last ${lines.length} log lines; "${cut(line)}"`,
        remedy: remedy.replace("{workload}", workload.ref),
        certainty: "suggestive",
        affects: someOf([workload.ref]),
      });
      break;
    }
  }
  return faults;
}
