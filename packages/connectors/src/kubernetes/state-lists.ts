import {
  Deployment,
  EndpointSlice,
  KubernetesEvent,
  type KubernetesState,
  Node,
  PersistentVolume,
  PersistentVolumeClaim,
  Pod,
  ReplicaSet,
  ResourceQuota,
  Service,
  StatefulSet,
  StorageClass,
} from "@pes/contracts";
import { z } from "zod";
import type { ApiGroup } from "./kubernetes-requests.js";

/**
 * Objects kept per list at most: the API server is asked for no more (`limit`), and an answer that holds
 * more (a server that ignores `limit`) is cut here. A namespace past it is cut silently: the contract has
 * no field to say so.
 */
export const MAX_OBJECTS_PER_LIST = 500;
/** Names kept per list of names at most (ConfigMaps, Secrets, ServiceAccounts): they are small. */
export const MAX_NAMES_PER_LIST = 2_000;

/**
 * The Accept header of a list of names: the objects' metadata only (`PartialObjectMetadataList`, served
 * by every API server since 1.15), so that a Secret's or ConfigMap's data never leaves the API server;
 * then plain JSON, for a server that cannot (its full list, of which only the names are kept).
 */
export const METADATA_ONLY = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";

/** The fields of the state that are lists. */
export type ListField = Exclude<keyof KubernetesState, "namespace" | "readAt" | "containerLogs">;
type NameField = "serviceAccounts" | "configMaps" | "secrets";

/** Where a list is: the action's namespace, the cluster (cluster-scoped kinds), or kube-system. */
export type ListScope = "namespace" | "cluster" | "kube-system";

/** One list of the state: where it is read, with what Accept header, and how its answer is kept. */
export interface StateList {
  field: ListField;
  group: ApiGroup;
  plural: string;
  scope: ListScope;
  /** The Accept header, when not plain JSON. */
  accept?: string;
  limit: number;
  /** Puts the answer's items (already cut to `limit`) into the state; false when they are not of the list's shape. */
  keep(state: KubernetesState, items: readonly unknown[]): boolean;
}

function objects<K extends Exclude<ListField, NameField>>(
  field: K,
  group: ApiGroup,
  plural: string,
  scope: ListScope,
  schema: z.ZodType<NonNullable<KubernetesState[K]>>,
): StateList {
  return {
    field,
    group,
    plural,
    scope,
    limit: MAX_OBJECTS_PER_LIST,
    keep(state, items) {
      const parsed = schema.safeParse(items);
      if (parsed.success) state[field] = parsed.data;
      return parsed.success;
    },
  };
}

const Named = z.array(z.object({ metadata: z.object({ name: z.string() }) }));

/** A list read for its names alone: metadata only when the server can, and nothing but names kept. */
function names(field: NameField, plural: string): StateList {
  return {
    field,
    group: "",
    plural,
    scope: "namespace",
    accept: METADATA_ONLY,
    limit: MAX_NAMES_PER_LIST,
    keep(state, items) {
      const parsed = Named.safeParse(items);
      if (parsed.success) state[field] = parsed.data.map(({ metadata }) => metadata.name);
      return parsed.success;
    },
  };
}

/**
 * Every list the `state` action reads, in the order they are asked (pods first: the containers whose logs
 * are read come from them). Each is the API's own JSON, parsed with the contract's schemas (fields they
 * do not name are dropped).
 */
export const STATE_LISTS: readonly StateList[] = [
  objects("pods", "", "pods", "namespace", z.array(Pod)),
  objects("events", "", "events", "namespace", z.array(KubernetesEvent)),
  objects("deployments", "apps", "deployments", "namespace", z.array(Deployment)),
  objects("statefulSets", "apps", "statefulsets", "namespace", z.array(StatefulSet)),
  objects("replicaSets", "apps", "replicasets", "namespace", z.array(ReplicaSet)),
  objects("services", "", "services", "namespace", z.array(Service)),
  objects("endpointSlices", "discovery.k8s.io", "endpointslices", "namespace", z.array(EndpointSlice)),
  objects("resourceQuotas", "", "resourcequotas", "namespace", z.array(ResourceQuota)),
  objects("persistentVolumeClaims", "", "persistentvolumeclaims", "namespace", z.array(PersistentVolumeClaim)),
  names("serviceAccounts", "serviceaccounts"),
  names("configMaps", "configmaps"),
  names("secrets", "secrets"),
  objects("nodes", "", "nodes", "cluster", z.array(Node)),
  objects("persistentVolumes", "", "persistentvolumes", "cluster", z.array(PersistentVolume)),
  objects("storageClasses", "storage.k8s.io", "storageclasses", "cluster", z.array(StorageClass)),
  objects("systemPods", "", "pods", "kube-system", z.array(Pod)),
];
