import type { EndpointSlice, KubernetesEvent, Pod, Service, ServicePort } from "@pes/contracts";
import { describedEvents } from "./events-text.js";
import { describeFields, field, isNone, keyValues, listValues, parseTable, value } from "./kubectl-text.js";

/** A Service's addresses as describe prints them (`Endpoints: 10.0.0.1:8080,10.0.0.2:8080`), per port. */
interface DescribedService {
  service: Service;
  /** `ip:port` per port entry, in the order of `spec.ports`. */
  endpoints: string[][];
  events: KubernetesEvent[];
}

function portNumber(text: string | undefined): number | string | undefined {
  if (text === undefined || isNone(text)) return undefined;
  return /^\d+$/.test(text) ? Number(text) : text;
}

/**
 * `kubectl describe services <name>`: selector, type, cluster IP, and each port (`Port: http 80/TCP`,
 * `TargetPort: 8080/TCP`, `NodePort: http 30080/TCP`, `Endpoints: ip:port,…`), which repeat per port.
 */
export function parseServiceDescribe(text: string, now: Date): DescribedService | undefined {
  const fields = describeFields(text);
  const name = value(fields, "Name");
  if (name === undefined) return undefined;
  const namespace = value(fields, "Namespace");
  const ports: ServicePort[] = [];
  const endpoints: string[][] = [];
  for (const entry of fields) {
    if (entry.key === "Port") {
      const match = /^(?:(\S+)\s+)?(\d+)\/(\w+)$/.exec(entry.value.trim());
      if (match === null) continue;
      const portName = match[1] === undefined || isNone(match[1]) ? undefined : match[1];
      ports.push({ ...(portName === undefined ? {} : { name: portName }), port: Number(match[2]), protocol: match[3] ?? "TCP" });
      endpoints.push([]);
    } else if (entry.key === "TargetPort") {
      const current = ports.at(-1);
      const target = portNumber(/^([^/\s]+)/.exec(entry.value.trim())?.[1]);
      if (current !== undefined && target !== undefined) current.targetPort = target;
    } else if (entry.key === "NodePort") {
      const current = ports.at(-1);
      const nodePort = /(\d+)\/\w+$/.exec(entry.value.trim());
      if (current !== undefined && nodePort !== null) current.nodePort = Number(nodePort[1]);
    } else if (entry.key === "Endpoints") {
      const addresses = entry.value
        .split(",")
        .map((address) => address.trim())
        .filter((address) => /^[\d.:a-f]+:\d+$/.test(address));
      endpoints[endpoints.length - 1] = addresses;
    }
  }
  const selector = keyValues(listValues(field(fields, "Selector")));
  const labels = keyValues(listValues(field(fields, "Labels")));
  const type = value(fields, "Type");
  const clusterIP = value(fields, "IP");
  const service: Service = {
    metadata: { name, ...(namespace === undefined ? {} : { namespace }), ...(Object.keys(labels).length === 0 ? {} : { labels }) },
    spec: {
      ...(type === undefined ? {} : { type }),
      ...(Object.keys(selector).length === 0 ? {} : { selector }),
      ports,
      ...(clusterIP === undefined ? {} : { clusterIP }),
    },
  };
  return {
    service,
    endpoints,
    events: describedEvents(field(fields, "Events"), { kind: "Service", name, ...(namespace === undefined ? {} : { namespace }) }, now),
  };
}

type SliceEndpoint = NonNullable<EndpointSlice["endpoints"]>[number];

function endpointOf(address: string, ready: boolean, pods: readonly Pod[]): SliceEndpoint {
  const pod = pods.find((candidate) => candidate.status?.podIP === address);
  return {
    addresses: [address],
    conditions: { ready, serving: ready },
    ...(pod?.spec?.nodeName === undefined ? {} : { nodeName: pod.spec.nodeName }),
    ...(pod === undefined ? {} : { targetRef: { kind: "Pod", name: pod.metadata.name } }),
  };
}

function sliceOf(service: string, namespace: string | undefined, endpoints: SliceEndpoint[], ports: EndpointSlice["ports"]): EndpointSlice {
  return {
    metadata: { name: service, ...(namespace === undefined ? {} : { namespace }), labels: { "kubernetes.io/service-name": service } },
    ports: ports ?? [],
    endpoints,
  };
}

/**
 * `kubectl describe endpoints <name>` (Subsets: Addresses, NotReadyAddresses, a Ports table) as the
 * EndpointSlice the API would hold for that Service; the pods tell each address's pod and node.
 */
export function parseEndpointsDescribe(text: string, pods: readonly Pod[]): EndpointSlice | undefined {
  const fields = describeFields(text);
  const name = value(fields, "Name");
  if (name === undefined) return undefined;
  const namespace = value(fields, "Namespace");
  const subsets = field(fields, "Subsets");
  const endpoints: SliceEndpoint[] = [];
  const ports: NonNullable<EndpointSlice["ports"]> = [];
  if (subsets !== undefined) {
    const subsetFields = describeFields(subsets.lines);
    for (const entry of subsetFields) {
      const ready = entry.key === "Addresses";
      if (!ready && entry.key !== "NotReadyAddresses") continue;
      for (const address of entry.value.split(",").map((part) => part.trim())) {
        if (!isNone(address)) endpoints.push(endpointOf(address, ready, pods));
      }
    }
    for (const row of parseTable(field(subsetFields, "Ports")?.lines ?? [], /^\s*Name\s+Port\s+Protocol/)) {
      const port = Number(row.Port);
      if (!Number.isFinite(port)) continue;
      ports.push({ ...(row.Name === undefined || isNone(row.Name) ? {} : { name: row.Name }), port, protocol: row.Protocol ?? "TCP" });
    }
  }
  return sliceOf(name, namespace, endpoints, ports);
}

/** A Service's EndpointSlice from the `Endpoints:` lines of its describe, when its endpoints were not described. */
export function sliceOfDescribedService(described: DescribedService, pods: readonly Pod[]): EndpointSlice {
  const { service, endpoints } = described;
  const addresses = new Set<string>();
  const ports = new Map<number, { port: number; protocol: string }>();
  endpoints.forEach((list, index) => {
    for (const entry of list) {
      const at = entry.lastIndexOf(":");
      addresses.add(entry.slice(0, at));
      const port = Number(entry.slice(at + 1));
      ports.set(port, { port, protocol: service.spec.ports?.[index]?.protocol ?? "TCP" });
    }
  });
  return sliceOf(
    service.metadata.name,
    service.metadata.namespace,
    [...addresses].map((address) => endpointOf(address, true, pods)),
    [...ports.values()],
  );
}
