import type { KubernetesState, TimeWindow } from "@pes/contracts";
import { indexState, type ClusterIndex, type Fault } from "./cluster-index.js";
import type { Cited, FaultEvidence } from "./evidence.js";
import { nodeFaults } from "./node-faults.js";
import { quotaFaults } from "./quota-faults.js";
import { addressFaults, logFaults, serviceFaults } from "./routing-faults.js";
import { schedulingFaults } from "./scheduling-faults.js";
import { admissionFaults, containerFaults } from "./workload-faults.js";

/**
 * What a namespace's state shows is wrong: one fault per object and mechanism, each naming the object,
 * quoting the field or message that decides it, and saying what would undo it. Only what is wrong now
 * counts: a pod Pending, waiting, restarting or not ready, a workload short of pods, a Service that
 * reaches nothing, a node not ready; the warnings a namespace leaves behind while it starts (a pod refused
 * before its ServiceAccount existed, a probe that failed once) are history once the objects run.
 *
 * Faults are given root first: the nodes', then the namespace's (a quota), then each workload's and
 * Service's, decisive before suggestive; a consequence of another fault (a workload on a node that is
 * not ready, the log of a workload whose own pods do not run) is left out.
 */
export function stateFindings(state: KubernetesState, window: TimeWindow, cited: Cited): FaultEvidence[] {
  const index = indexState(state, window.time);
  const onNodes = nodeFaults(index);
  const brokenNodes = new Set(onNodes.map((fault) => fault.subject.slice("node/".length)));
  const ofWorkloads: Fault[] = [];
  for (const workload of index.workloads.values()) {
    const onBrokenNode = workload.pods.length > 0 && workload.pods.every((pod) => brokenNodes.has(pod.spec?.nodeName ?? ""));
    const own = [...admissionFaults(index, workload), ...schedulingFaults(index, workload), ...(onBrokenNode ? [] : containerFaults(index, workload))];
    ofWorkloads.push(...own);
  }
  const routing = [...serviceFaults(index), ...addressFaults(index)];
  const quotas = quotaFaults(index);
  // A workload's log is read for its dependencies only when nothing else explains its trouble, and a line
  // naming a dependency with a fault of its own is that fault's consequence.
  const logs = logFaults(index, explainedObjects(index, [...onNodes, ...ofWorkloads, ...routing, ...quotas]));
  // A claim a storage quota keeps from binding is the quota's doing, not the volume's.
  const byQuota = new Set(quotas.flatMap((fault) => (fault.mechanism === "quota/storage" ? fault.affects : [])));
  const own = ofWorkloads.filter((fault) => !(byQuota.has(fault.subject) && /^(volume|unschedulable)\//.test(fault.mechanism)));
  const all = dedupe([...onNodes, ...quotas, ...mergeQuotas(own), ...routing, ...logs]);
  const ordered = [...all.filter((fault) => fault.certainty === "decisive"), ...all.filter((fault) => fault.certainty === "suggestive")];
  return ordered.map((fault) => ({ kind: "fault", ...cited, ...fault }));
}

/** The objects the faults are about or keep from working, their pods' workloads included. */
function explainedObjects(index: ClusterIndex, faults: readonly Fault[]): Set<string> {
  const pods = new Map((index.state.pods ?? []).map((pod) => [`pod/${pod.metadata.name}`, pod]));
  return new Set(
    faults.flatMap((fault) => [
      fault.subject,
      ...fault.affects.flatMap((object) => {
        const pod = pods.get(object);
        return pod === undefined ? [object] : [object, index.workloadOf(pod).ref];
      }),
    ]),
  );
}

/** One fault per namespace quota and mechanism, whichever workloads it refuses. */
function mergeQuotas(faults: readonly Fault[]): Fault[] {
  const merged: Fault[] = [];
  for (const fault of faults) {
    const same = merged.find((other) => other.subject === fault.subject && other.mechanism === fault.mechanism);
    if (same === undefined) merged.push(fault);
    else merged[merged.indexOf(same)] = { ...same, affects: [...new Set([...same.affects, ...fault.affects])] };
  }
  return merged;
}

function dedupe(faults: readonly Fault[]): Fault[] {
  const seen = new Set<string>();
  return faults.filter((fault) => {
    const key = `${fault.subject} ${fault.mechanism}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
