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
      if (unserved.length > 0)
        faults.push(
          quotaFault(
            index,
            quota,
            services,
            "services",
            unserved.map((workload) => workload.ref),
            `${unserved.map((one) => one.ref).join(", ")} has no Service`,
          ),
        );
    }
    const storage = storageResource(quota);
    if (storage !== undefined && index.state.persistentVolumeClaims !== undefined) {
      const fault = storageFault(index, quota, storage, full.includes(storage));
      if (fault !== undefined) faults.push(fault);
    }
  }
  return faults;
}

/**
 * A storage quota that stands between a workload and its claim: a claim not bound that asks for more than
 * the quota has free (decisive); a claim that does not exist, which a full quota refuses (decisive) or one
 * with room may have refused (suggestive: the API server keeps no trace of a refused claim).
 */
function storageFault(index: ClusterIndex, quota: ResourceQuota, resource: string, full: boolean): Fault | undefined {
  const claims = index.state.persistentVolumeClaims ?? [];
  const free = (quantityOf(quota.status?.hard?.[resource] ?? quota.spec?.hard?.[resource]) ?? 0) - (quantityOf(quota.status?.used?.[resource]) ?? 0);
  const requests = resource === "requests.storage" || resource.endsWith(".storageclass.storage.k8s.io/requests.storage");
  const over = claims.filter((claim) => claim.status?.phase !== "Bound" && requests && (quantityOf(claim.spec?.resources?.requests?.storage) ?? 0) > free);
  const users = (names: ReadonlySet<string>) =>
    [...index.workloads.values()].filter((workload) =>
      (workload.spec?.volumes ?? []).some((volume) => volume.persistentVolumeClaim !== undefined && names.has(volume.persistentVolumeClaim.claimName)),
    );
  const [claim] = over;
  if (claim !== undefined) {
    const affects = users(new Set(over.map((one) => one.metadata.name))).map((workload) => workload.ref);
    return quotaFault(index, quota, resource, "storage", affects, `claim ${claim.metadata.name} asks ${claim.spec?.resources?.requests?.storage}`);
  }
  const known = new Set(claims.map((one) => one.metadata.name));
  const waiting = [...index.workloads.values()].filter((workload) =>
    (workload.spec?.volumes ?? []).some((volume) => volume.persistentVolumeClaim !== undefined && !known.has(volume.persistentVolumeClaim.claimName)),
  );
  if (waiting.length === 0) return undefined;
  const fault = quotaFault(
    index,
    quota,
    resource,
    "storage",
    waiting.map((workload) => workload.ref),
    `${waiting.map((one) => one.ref).join(", ")} waits for a claim that does not exist`,
  );
  return full ? fault : { ...fault, certainty: "suggestive" };
}

function storageResource(quota: ResourceQuota): string | undefined {
  return Object.keys(quota.status?.hard ?? quota.spec?.hard ?? {}).find((name) => /requests\.storage$|persistentvolumeclaims$/.test(name));
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
