import { describe, expect, it } from "vitest";
import { DESCRIBE_CLAIM, DESCRIBE_QUOTA, DESCRIBE_VOLUME, GET_STORAGE_CLASSES } from "../testing/synthetic-case.js";
import { parseQuotaDescribe, quotasOfTable } from "./quotas-text.js";
import { mergeClaim, namesOfTable, parseClaimDescribe, parseVolumeDescribe, storageClassesOfTable } from "./volumes-text.js";

const now = new Date("2026-03-02T09:00:00Z");

describe("quotas", () => {
  it("reads describe's Used and Hard columns", () => {
    expect(parseQuotaDescribe(DESCRIBE_QUOTA)).toEqual({
      metadata: { name: "pods-quota", namespace: "shop" },
      spec: { hard: { pods: "3", "requests.cpu": "2" } },
      status: { hard: { pods: "3", "requests.cpu": "2" }, used: { pods: "3", "requests.cpu": "750m" } },
    });
  });

  it("reads get resourcequota's used/hard pairs", () => {
    const table = `NAME        AGE   REQUEST                              LIMIT
cpu-quota   5m    requests.cpu: 10/1, pods: 3/10       limits.cpu: 2/4`;
    expect(quotasOfTable(table, "shop")[0]?.status).toEqual({
      used: { "requests.cpu": "10", pods: "3", "limits.cpu": "2" },
      hard: { "requests.cpu": "1", pods: "10", "limits.cpu": "4" },
    });
  });
});

describe("claims, volumes, classes", () => {
  it("reads a pending claim and takes its selector from the manifest's", () => {
    const parsed = parseClaimDescribe(DESCRIBE_CLAIM, now);
    expect(parsed?.claim).toEqual({
      metadata: { name: "checkout-cache", namespace: "shop" },
      spec: { storageClassName: "fast" },
      status: { phase: "Pending" },
    });
    expect(parsed?.events[0]).toMatchObject({
      reason: "ProvisioningFailed",
      count: 8,
      involvedObject: { kind: "PersistentVolumeClaim", name: "checkout-cache" },
    });
    const merged = mergeClaim(parsed?.claim, {
      metadata: { name: "checkout-cache", namespace: "shop" },
      spec: { accessModes: ["ReadWriteOnce"], storageClassName: "fast", selector: { matchLabels: { tier: "cache" } } },
    });
    expect(merged?.spec?.selector).toEqual({ matchLabels: { tier: "cache" } });
    expect(merged?.status).toEqual({ phase: "Pending" });
  });

  it("reads a volume's claim, modes (short names expanded), class and labels", () => {
    expect(parseVolumeDescribe(DESCRIBE_VOLUME, now)?.volume).toEqual({
      metadata: { name: "shared-pv", labels: { tier: "cache" } },
      spec: {
        accessModes: ["ReadWriteOnce", "ReadOnlyMany"],
        capacity: { storage: "2Gi" },
        storageClassName: "",
        claimRef: { name: "shared-claim", namespace: "other" },
        persistentVolumeReclaimPolicy: "Retain",
      },
      status: { phase: "Bound" },
    });
  });

  it("reads storage classes and names from get tables", () => {
    expect(storageClassesOfTable(GET_STORAGE_CLASSES)).toEqual([
      { metadata: { name: "standard" }, provisioner: "kubernetes.io/no-provisioner", volumeBindingMode: "WaitForFirstConsumer" },
    ]);
    expect(namesOfTable("NAME      SECRETS   AGE\nbuilder   0         3d\ndefault   0         3d\n")).toEqual(["builder", "default"]);
    expect(namesOfTable("No resources found in shop namespace.")).toEqual([]);
  });
});
