import type { Condition, Node } from "@pes/contracts";
import { someOf, type ClusterIndex, type Fault } from "./cluster-index.js";

const PRESSURES: Readonly<Record<string, string>> = {
  MemoryPressure: "node/memory-pressure",
  DiskPressure: "node/disk-pressure",
  PIDPressure: "node/pid-pressure",
  NetworkUnavailable: "node/network",
};

/**
 * What the nodes' conditions say of the nodes and their components: not ready because the kubelet stopped
 * reporting or the container runtime is down, under pressure, without a pod network; and node components
 * that run as kube-system pods (kube-proxy) not running on a node. Each names the node and the pods of the
 * namespace it hosts.
 */
export function nodeFaults(index: ClusterIndex): Fault[] {
  const faults: Fault[] = [];
  for (const node of index.state.nodes ?? []) {
    const name = node.metadata.name;
    const hosted = someOf((index.state.pods ?? []).filter((pod) => pod.spec?.nodeName === name).map((pod) => `pod/${pod.metadata.name}`));
    const conditions = node.status?.conditions ?? [];
    const ready = conditions.find((condition) => condition.type === "Ready");
    if (ready !== undefined && ready.status !== "True") faults.push(notReady(node, ready, hosted));
    for (const condition of conditions) {
      const mechanism = PRESSURES[condition.type];
      if (mechanism === undefined || condition.status !== "True") continue;
      faults.push({
        subject: `node/${name}`,
        mechanism,
        detail: conditionText(condition),
        remedy: `Relieve ${name} (${condition.type}): drain or move the pods crowding it`,
        certainty: "decisive",
        affects: hosted,
        ...onsetOf(condition),
      });
    }
  }
  for (const pod of index.state.systemPods ?? []) {
    const component = pod.metadata.labels?.["k8s-app"] ?? pod.metadata.labels?.component ?? "";
    const node = pod.spec?.nodeName;
    if (component !== "kube-proxy" || node === undefined) continue;
    const running = pod.status?.phase === "Running" && (pod.status.containerStatuses ?? []).every((status) => status.ready !== false);
    if (running) continue;
    faults.push({
      subject: `node/${node}`,
      mechanism: "node/kube-proxy",
      detail: `${pod.metadata.name} ${pod.status?.phase ?? "not running"}`,
      remedy: `Restart kube-proxy on ${node}`,
      certainty: "decisive",
      affects: [`pod/${pod.metadata.name}`],
    });
  }
  return faults;
}

function notReady(node: Node, ready: Condition, hosted: string[]): Fault {
  const name = node.metadata.name;
  const text = `${ready.reason ?? ""} ${ready.message ?? ""}`;
  const base = { subject: `node/${name}`, detail: conditionText(ready), certainty: "decisive" as const, affects: hosted, ...onsetOf(ready) };
  if (/container runtime (is down|not ready|is not running)|PLEG is not healthy|runtime is down/i.test(text) && !/network not ready/i.test(text)) {
    return {
      ...base,
      mechanism: "node/container-runtime",
      remedy: `Restart the container runtime (containerd) on ${name}; cordon and drain ${name} meanwhile`,
    };
  }
  if (/network not ready|cni/i.test(text)) return { ...base, mechanism: "node/network", remedy: `Restore the pod network (CNI) on ${name}` };
  if (ready.status === "Unknown" || /stopped posting node status|NodeStatusUnknown|kubelet.*(stopped|not running)/i.test(text)) {
    return { ...base, mechanism: "node/kubelet", remedy: `Restart the kubelet on ${name}; cordon and drain ${name} meanwhile` };
  }
  return { ...base, mechanism: "node/not-ready", remedy: `Find why ${name} is not ready (its kubelet's logs); cordon and drain it meanwhile` };
}

function conditionText(condition: Condition): string {
  return `${condition.type}=${condition.status}${condition.reason === undefined ? "" : ` (${condition.reason})`}${condition.message === undefined || condition.message === "" ? "" : `: "${condition.message}"`}`;
}

function onsetOf(condition: Condition): { onset?: Date } {
  return condition.lastTransitionTime ? { onset: new Date(condition.lastTransitionTime) } : {};
}
