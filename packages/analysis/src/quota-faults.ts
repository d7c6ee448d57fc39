import type { ResourceQuota } from "@pes/contracts";
import { selects, type ClusterIndex, type Fault } from "./cluster-index.js";
import { quantityOf } from "./quantities.js";

/**
 * A namespace quota that is full while what it refuses is missing, when no event says so (the API server
 * refuses a Service or a claim to whoever creates it, and records nothing): a quota of Services at its
 * limit while a workload that serves ports has no Service; a storage quota at its limit while a pod
 * waits for a claim that does not exist.
 */
export function quotaFaults(index: ClusterIndex): Fault[] {
  const faults: Fault[] = [];
  for (const quota of index.state.resourceQuotas ?? []) {
    const full = fullResources(quota);
    const services = full.find((name) => name === "services" || name === "count/services");
    if (services !== undefined && index.state.services !== undefined) {
      const unserved = [...index.workloads.values()].filter(
        (workload) =>
          (workload.spec?.containers ?? []).some((container) => (container.ports ?? []).length > 0) &&
          !(index.state.services ?? []).some((service) => selects(service.spec.selector ?? {}, workload.labels)),
      );
      if (unserved.length > 0) faults.push(quotaFault(index, quota, services, "services", unserved.map((workload) => workload.ref), `${unserved.map((one) => one.ref).join(", ")} has no Service`));
    }
    const storage = full.find((name) => /storage|persistentvolumeclaims/.test(name));
    if (storage !== undefined && index.state.persistentVolumeClaims !== undefined) {
      const claims = new Set(index.state.persistentVolumeClaims.map((claim) => claim.metadata.name));
      const waiting = [...index.workloads.values()].filter((workload) => (workload.spec?.volumes ?? []).some((volume) => volume.persistentVolumeClaim !== undefined && !claims.has(volume.persistentVolumeClaim.claimName)));
      if (waiting.length > 0) faults.push(quotaFault(index, quota, storage, "storage", waiting.map((workload) => workload.ref), `${waiting.map((one) => one.ref).join(", ")} waits for a claim that does not exist`));
    }
  }
  return faults;
}

function quotaFault(index: ClusterIndex, quota: ResourceQuota, resource: string, mechanism: string, affects: string[], missing: string): Fault {
  const used = quota.status?.used?.[resource];
  const hard = quota.status?.hard?.[resource] ?? quota.spec?.hard?.[resource];
  return {
    subject: `namespace/${index.namespace}`,
    mechanism: `quota/${mechanism}`,
    detail: `quota ${quota.metadata.name}: ${resource} used ${used} of ${hard}; ${missing}`,
    remedy: `Raise ${resource} in quota ${quota.metadata.name} of ${index.namespace} (now ${hard}), or remove what fills it`,
    certainty: "decisive",
    affects,
  };
}

/** The quota's resources whose use has reached their hard limit. */
function fullResources(quota: ResourceQuota): string[] {
  const hard = quota.status?.hard ?? quota.spec?.hard ?? {};
  const used = quota.status?.used ?? {};
  return Object.keys(hard).filter((name) => {
    const limit = quantityOf(hard[name]);
    const now = quantityOf(used[name]);
    return limit !== undefined && now !== undefined && now >= limit;
  });
}
