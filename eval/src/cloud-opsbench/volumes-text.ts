import type { KubernetesEvent, PersistentVolume, PersistentVolumeClaim, StorageClass } from "@pes/contracts";
import { describedEvents } from "./events-text.js";
import { describeFields, field, isNone, keyValues, listValues, parseTable, value } from "./kubectl-text.js";

/** kubectl's short access modes. */
const ACCESS_MODES: Record<string, string> = { RWO: "ReadWriteOnce", ROX: "ReadOnlyMany", RWX: "ReadWriteMany", RWOP: "ReadWriteOncePod" };

function accessModes(text: string | undefined): string[] | undefined {
  if (text === undefined) return undefined;
  const modes = text
    .split(",")
    .map((mode) => mode.trim())
    .filter((mode) => mode !== "")
    .map((mode) => ACCESS_MODES[mode] ?? mode);
  return modes.length === 0 ? undefined : modes;
}

/** A field's value, kept when empty: `StorageClass:` with nothing after it is the class `""`. */
function rawValue(text: string, key: string): string | undefined {
  const found = field(describeFields(text), key);
  return found === undefined ? undefined : found.value.trim();
}

/**
 * `kubectl describe persistentvolumeclaims <name>`: status, volume, class, capacity, access modes, events.
 * Its selector is not printed: a manifest's claim fills it (mergeClaim).
 */
export function parseClaimDescribe(text: string, now: Date): { claim: PersistentVolumeClaim; events: KubernetesEvent[] } | undefined {
  const fields = describeFields(text);
  const name = value(fields, "Name");
  if (name === undefined) return undefined;
  const namespace = value(fields, "Namespace");
  const storageClass = rawValue(text, "StorageClass");
  const volume = value(fields, "Volume");
  const capacity = value(fields, "Capacity");
  const modes = accessModes(value(fields, "Access Modes"));
  const labels = keyValues(listValues(field(fields, "Labels")));
  const claim: PersistentVolumeClaim = {
    metadata: { name, ...(namespace === undefined ? {} : { namespace }), ...(Object.keys(labels).length === 0 ? {} : { labels }) },
    spec: {
      ...(modes === undefined ? {} : { accessModes: modes }),
      ...(storageClass === undefined ? {} : { storageClassName: storageClass }),
      ...(volume === undefined ? {} : { volumeName: volume }),
    },
    status: { ...optional("phase", value(fields, "Status")), ...(capacity === undefined ? {} : { capacity: { storage: capacity } }) },
  };
  return {
    claim,
    events: describedEvents(field(fields, "Events"), { kind: "PersistentVolumeClaim", name, ...(namespace === undefined ? {} : { namespace }) }, now),
  };
}

function optional<K extends string>(key: K, text: string | undefined): Partial<Record<K, string>> {
  return text === undefined ? {} : ({ [key]: text } as Partial<Record<K, string>>);
}

/** The claim as the API holds it: the manifest's spec (selector, requests, modes, class), describe's binding and status. */
export function mergeClaim(described: PersistentVolumeClaim | undefined, manifest: PersistentVolumeClaim | undefined): PersistentVolumeClaim | undefined {
  if (described === undefined || manifest === undefined) return described ?? manifest;
  return {
    metadata: { ...manifest.metadata, ...described.metadata },
    spec: { ...described.spec, ...manifest.spec, ...(described.spec?.volumeName === undefined ? {} : { volumeName: described.spec.volumeName }) },
    ...(described.status === undefined ? {} : { status: described.status }),
  };
}

/** `kubectl describe persistentvolumes <name>`: labels, class, status, claim, reclaim policy, modes, capacity, events. */
export function parseVolumeDescribe(text: string, now: Date): { volume: PersistentVolume; events: KubernetesEvent[] } | undefined {
  const fields = describeFields(text);
  const name = value(fields, "Name");
  if (name === undefined) return undefined;
  const labels = keyValues(listValues(field(fields, "Labels")));
  const claim = value(fields, "Claim");
  const [claimNamespace, claimName] = claim === undefined ? [] : claim.includes("/") ? claim.split("/") : [undefined, claim];
  const capacity = value(fields, "Capacity");
  const modes = accessModes(value(fields, "Access Modes"));
  const storageClass = rawValue(text, "StorageClass");
  const reclaim = value(fields, "Reclaim Policy");
  const volume: PersistentVolume = {
    metadata: { name, ...(Object.keys(labels).length === 0 ? {} : { labels }) },
    spec: {
      ...(modes === undefined ? {} : { accessModes: modes }),
      ...(capacity === undefined ? {} : { capacity: { storage: capacity } }),
      ...(storageClass === undefined ? {} : { storageClassName: storageClass }),
      ...(claimName === undefined ? {} : { claimRef: { name: claimName, ...(claimNamespace === undefined ? {} : { namespace: claimNamespace }) } }),
      ...(reclaim === undefined ? {} : { persistentVolumeReclaimPolicy: reclaim }),
    },
    status: { ...optional("phase", value(fields, "Status")) },
  };
  return { volume, events: describedEvents(field(fields, "Events"), { kind: "PersistentVolume", name }, now) };
}

/** `kubectl describe storageclasses <name>`: provisioner and binding mode. */
export function parseStorageClassDescribe(text: string): StorageClass | undefined {
  const fields = describeFields(text);
  const name = value(fields, "Name");
  if (name === undefined) return undefined;
  const provisioner = value(fields, "Provisioner");
  const binding = value(fields, "VolumeBindingMode");
  return { metadata: { name }, ...(provisioner === undefined ? {} : { provisioner }), ...(binding === undefined ? {} : { volumeBindingMode: binding }) };
}

/** `kubectl get storageclasses` (NAME PROVISIONER RECLAIMPOLICY VOLUMEBINDINGMODE …), for classes not described. */
export function storageClassesOfTable(text: string): StorageClass[] {
  return parseTable(text, /^NAME\s+PROVISIONER/).flatMap((row): StorageClass[] => {
    const name = (row.NAME ?? "").replace(/\s*\(default\)$/, "");
    if (name === "" || isNone(name)) return [];
    return [
      {
        metadata: { name },
        ...(row.PROVISIONER ? { provisioner: row.PROVISIONER } : {}),
        ...(row.VOLUMEBINDINGMODE ? { volumeBindingMode: row.VOLUMEBINDINGMODE } : {}),
      },
    ];
  });
}

/** The NAME column of a `get` table (ServiceAccounts, ConfigMaps, Secrets). */
export function namesOfTable(text: string): string[] {
  return parseTable(text, /^NAME\b/).flatMap((row) => (row.NAME === undefined || row.NAME === "" ? [] : [row.NAME]));
}
