import type { ServerResponse } from "node:http";
import type { ServerOptions as HttpsOptions } from "node:https";
import { sendJson, startTestHttpServer, type TestHttpServer } from "./test-http-server.js";

/** A Kubernetes object as the API serves it (JSON); only `metadata` is read by the fake itself. */
export interface KubernetesObject {
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; [field: string]: unknown };
  [field: string]: unknown;
}

/** What one container wrote: its current run's lines, and its previous run's when it restarted. */
export interface FakeContainerLog {
  namespace: string;
  pod: string;
  container: string;
  lines: readonly string[];
  previous?: readonly string[];
}

/** The objects the fake serves, by list; a namespaced object without `metadata.namespace` is in `default`. */
export interface FakeKubernetesObjects {
  /** core/v1 Events (`involvedObject`, `reason`, `message`, `type`, `lastTimestamp`…). */
  events?: readonly KubernetesObject[];
  /** apps/v1 Deployments. */
  deployments?: readonly KubernetesObject[];
  /** apps/v1 ReplicaSets (with `ownerReferences` to their Deployment). */
  replicaSets?: readonly KubernetesObject[];
  /** apps/v1 StatefulSets. */
  statefulSets?: readonly KubernetesObject[];
  /** core/v1 Pods (with `status.containerStatuses`), kube-system's as well. */
  pods?: readonly KubernetesObject[];
  services?: readonly KubernetesObject[];
  /** discovery.k8s.io/v1 EndpointSlices (labelled `kubernetes.io/service-name`). */
  endpointSlices?: readonly KubernetesObject[];
  resourceQuotas?: readonly KubernetesObject[];
  persistentVolumeClaims?: readonly KubernetesObject[];
  serviceAccounts?: readonly KubernetesObject[];
  /** ConfigMaps and Secrets with their `data`, as a cluster holds them. */
  configMaps?: readonly KubernetesObject[];
  secrets?: readonly KubernetesObject[];
  /** Cluster-scoped: Nodes, PersistentVolumes, storage.k8s.io/v1 StorageClasses. */
  nodes?: readonly KubernetesObject[];
  persistentVolumes?: readonly KubernetesObject[];
  storageClasses?: readonly KubernetesObject[];
  /** What `GET …/pods/{pod}/log` answers. */
  logs?: readonly FakeContainerLog[];
}

export interface FakeKubernetesOptions {
  /** When set, every request must carry `Authorization: Bearer <token>`, else 401 as the API server answers. */
  token?: string;
  /** Serve HTTPS with these options, as an API server does. */
  https?: HttpsOptions;
  /**
   * Resources the token may not read, answered 403 as RBAC does: a plural (`secrets`, `nodes`,
   * `storageclasses`) or `pods/log`.
   */
  forbidden?: readonly string[];
  /**
   * Whether lists are served as `PartialObjectMetadataList` when the Accept header asks for it (default:
   * true, as every API server since 1.15); false plays a server that answers the full list instead.
   */
  metadataOnly?: boolean;
}

interface Resource {
  group: string;
  plural: string;
  kind: string;
  namespaced: boolean;
  objects: readonly KubernetesObject[];
}

const PATH = /^\/(?:api\/v1|apis\/([a-z0-9.-]+)\/v1)(?:\/namespaces\/([^/]+))?\/([a-z]+)(?:\/([^/]+))?(?:\/(log))?$/;
const METADATA_LIST = /(^|,)\s*application\/json;\s*as=PartialObjectMetadataList;\s*g=meta\.k8s\.io;\s*v=v1\s*(,|$)/;

/**
 * A Kubernetes API server for tests: a real HTTP server answering the list and get endpoints of a
 * namespace's events, pods, Deployments, ReplicaSets, StatefulSets, Services, EndpointSlices,
 * ResourceQuotas, PersistentVolumeClaims, ServiceAccounts, ConfigMaps and Secrets, of the cluster's
 * Nodes, PersistentVolumes and StorageClasses, and pods' logs, with the API's own JSON (List objects,
 * `Status` errors): real `labelSelector` (`=`, `==`, `!=`, `in`, `notin`, `key`, `!key`) and
 * `fieldSelector` (`=`, `==`, `!=` on dotted fields) filtering, `limit` (with `metadata.continue` and
 * `remainingItemCount` when more are left), metadata-only lists (`Accept:
 * application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1`), the log's `container`,
 * `tailLines` and `previous`, and 403 for what the test forbids. Anything else is a 404 Status.
 */
export function startFakeKubernetes(objects: FakeKubernetesObjects, options: FakeKubernetesOptions = {}): Promise<TestHttpServer> {
  const resource = (group: string, plural: string, kind: string, namespaced: boolean, list: readonly KubernetesObject[] | undefined): [string, Resource] => [
    `${group}/${plural}`,
    { group, plural, kind, namespaced, objects: list ?? [] },
  ];
  const resources = new Map<string, Resource>([
    resource("", "events", "Event", true, objects.events),
    resource("", "pods", "Pod", true, objects.pods),
    resource("", "services", "Service", true, objects.services),
    resource("", "resourcequotas", "ResourceQuota", true, objects.resourceQuotas),
    resource("", "persistentvolumeclaims", "PersistentVolumeClaim", true, objects.persistentVolumeClaims),
    resource("", "serviceaccounts", "ServiceAccount", true, objects.serviceAccounts),
    resource("", "configmaps", "ConfigMap", true, objects.configMaps),
    resource("", "secrets", "Secret", true, objects.secrets),
    resource("", "nodes", "Node", false, objects.nodes),
    resource("", "persistentvolumes", "PersistentVolume", false, objects.persistentVolumes),
    resource("apps", "deployments", "Deployment", true, objects.deployments),
    resource("apps", "replicasets", "ReplicaSet", true, objects.replicaSets),
    resource("apps", "statefulsets", "StatefulSet", true, objects.statefulSets),
    resource("discovery.k8s.io", "endpointslices", "EndpointSlice", true, objects.endpointSlices),
    resource("storage.k8s.io", "storageclasses", "StorageClass", false, objects.storageClasses),
  ]);
  const forbidden = new Set(options.forbidden ?? []);
  const metadataOnly = options.metadataOnly ?? true;
  return startTestHttpServer(
    (request, response) => {
      if (options.token !== undefined && request.headers.authorization !== `Bearer ${options.token}`) {
        return sendStatus(response, 401, "Unauthorized", "Unauthorized");
      }
      const url = new URL(request.url, "http://fake");
      const match = PATH.exec(url.pathname);
      const [, group = "", rawNamespace, plural = "", rawName, log] = match ?? [];
      const found = resources.get(`${group}/${plural}`);
      const namespace = rawNamespace === undefined ? undefined : decodeURIComponent(rawNamespace);
      const name = rawName === undefined ? undefined : decodeURIComponent(rawName);
      if (
        request.method !== "GET" ||
        found === undefined ||
        (namespace !== undefined && !found.namespaced) ||
        (log !== undefined && (plural !== "pods" || name === undefined))
      ) {
        return sendStatus(response, 404, "NotFound", "the server could not find the requested resource");
      }
      const what = found.group === "" ? found.plural : `${found.plural}.${found.group}`;
      const verb = log !== undefined || name !== undefined ? "get" : "list";
      const subresource = log === undefined ? "" : "/log";
      if (forbidden.has(`${found.plural}${subresource}`)) {
        const where = namespace === undefined ? "at the cluster scope" : `in the namespace "${namespace}"`;
        const message = `${what}${subresource} is forbidden: User "system:serviceaccount:pes:pes" cannot ${verb} resource "${found.plural}"${log === undefined ? "" : ' subresource "log"'} in API group "${found.group}" ${where}`;
        return sendStatus(response, 403, "Forbidden", message);
      }
      const inScope = found.objects.filter((object) => namespace === undefined || (object.metadata.namespace ?? "default") === namespace);
      if (log !== undefined) return sendLog(response, url.searchParams, objects.logs ?? [], namespace ?? "default", name ?? "", inScope);
      if (name !== undefined) {
        const object = inScope.find((candidate) => candidate.metadata.name === name);
        if (object === undefined) return sendStatus(response, 404, "NotFound", `${what} "${name}" not found`);
        return sendJson(response, 200, { kind: found.kind, apiVersion: apiVersion(found), ...object });
      }
      let labels: Predicate;
      let fields: Predicate;
      let limit: number | undefined;
      try {
        labels = labelSelector(url.searchParams.get("labelSelector") ?? "");
        fields = fieldSelector(url.searchParams.get("fieldSelector") ?? "");
        limit = listLimit(url.searchParams.get("limit"));
      } catch (error) {
        return sendStatus(response, 400, "BadRequest", error instanceof Error ? error.message : String(error));
      }
      const matching = inScope.filter((object) => labels(object) && fields(object));
      const items = limit === undefined ? matching : matching.slice(0, limit);
      const remaining = matching.length - items.length;
      const metadata = { resourceVersion: "1", ...(remaining > 0 ? { continue: `fake-continue-${items.length}`, remainingItemCount: remaining } : {}) };
      if (metadataOnly && METADATA_LIST.test(request.headers.accept ?? "")) {
        const partial = items.map((object) => ({ kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: object.metadata }));
        return sendJson(
          response,
          200,
          { kind: "PartialObjectMetadataList", apiVersion: "meta.k8s.io/v1", metadata, items: partial },
          "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
        );
      }
      return sendJson(response, 200, { kind: `${found.kind}List`, apiVersion: apiVersion(found), metadata, items });
    },
    options.https === undefined ? {} : { https: options.https },
  );
}

/** `limit` as the API server reads it: a positive integer, or none (0 and absent both mean all). */
function listLimit(text: string | null): number | undefined {
  if (text === null) return undefined;
  if (!/^\d+$/.test(text)) throw new Error(`invalid limit: ${text}`);
  const limit = Number(text);
  return limit === 0 ? undefined : limit;
}

/** A container's log as the kubelet serves it through the API server: text, its last `tailLines` lines. */
function sendLog(
  response: ServerResponse,
  query: URLSearchParams,
  logs: readonly FakeContainerLog[],
  namespace: string,
  pod: string,
  pods: readonly KubernetesObject[],
) {
  if (!pods.some((object) => object.metadata.name === pod)) return sendStatus(response, 404, "NotFound", `pods "${pod}" not found`);
  const ofPod = logs.filter((log) => log.namespace === namespace && log.pod === pod);
  const container = query.get("container") ?? (ofPod.length === 1 ? ofPod[0]?.container : undefined);
  if (container === undefined) return sendStatus(response, 400, "BadRequest", `a container name must be specified for pod ${pod}`);
  const log = ofPod.find((candidate) => candidate.container === container);
  if (log === undefined) return sendStatus(response, 400, "BadRequest", `container ${container} is not valid for pod ${pod}`);
  const previous = query.get("previous") === "true";
  const lines = previous ? log.previous : log.lines;
  if (lines === undefined) return sendStatus(response, 400, "BadRequest", `previous terminated container "${container}" in pod "${pod}" not found`);
  const tail = query.get("tailLines");
  const kept = tail === null ? lines : lines.slice(Math.max(0, lines.length - Number(tail)));
  const text = kept.map((line) => `${line}\n`).join("");
  response.writeHead(200, { "content-type": "text/plain", "content-length": Buffer.byteLength(text) });
  response.end(text);
}

type Predicate = (object: KubernetesObject) => boolean;

function apiVersion(resource: Resource): string {
  return resource.group === "" ? "v1" : `${resource.group}/v1`;
}

/** An error as the API server answers it: a `Status` object. */
function sendStatus(response: ServerResponse, code: number, reason: string, message: string): void {
  sendJson(response, code, { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message, reason, code });
}

const LABEL_KEY = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** Splits at commas outside parentheses (`a in (x,y),b=c`). */
function requirements(selector: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = "";
  for (const char of selector) {
    if (char === "(") depth += 1;
    if (char === ")") depth -= 1;
    if (char === "," && depth === 0) {
      parts.push(current.trim());
      current = "";
    } else {
      current += char;
    }
  }
  if (current.trim() !== "") parts.push(current.trim());
  return parts;
}

/** A label selector as the API server parses it (k8s.io/apimachinery/pkg/labels). */
function labelSelector(selector: string): Predicate {
  const tests = requirements(selector).map((requirement): Predicate => {
    const set = /^(\S+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(requirement);
    if (set !== null) {
      const [, key = "", operator, list = ""] = set;
      const values = list.split(",").map((value) => value.trim());
      checkLabel(key, values);
      return (object) => {
        const value = object.metadata.labels?.[key];
        return operator === "in" ? value !== undefined && values.includes(value) : value === undefined || !values.includes(value);
      };
    }
    const equality = /^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(requirement);
    if (equality !== null) {
      const [, key = "", operator, value = ""] = equality;
      checkLabel(key, [value]);
      return (object) => (operator === "!=" ? object.metadata.labels?.[key] !== value : object.metadata.labels?.[key] === value);
    }
    const exists = /^(!?)(\S+)$/.exec(requirement);
    if (exists !== null) {
      const [, not, key = ""] = exists;
      checkLabel(key, []);
      return (object) => (object.metadata.labels?.[key] !== undefined) !== (not === "!");
    }
    throw new Error(`unable to parse requirement: ${requirement}`);
  });
  return (object) => tests.every((test) => test(object));
}

function checkLabel(key: string, values: readonly string[]): void {
  if (!LABEL_KEY.test(key)) throw new Error(`unable to parse requirement: invalid label key "${key}"`);
  for (const value of values) {
    if (value.length > 63 || !LABEL_VALUE.test(value)) throw new Error(`unable to parse requirement: invalid label value: "${value}"`);
  }
}

/** A field selector (`a.b=v,c!=w`), read on the object's JSON by dotted path. */
function fieldSelector(selector: string): Predicate {
  const tests = requirements(selector).map((requirement): Predicate => {
    const match = /^([A-Za-z.]+)\s*(==|=|!=)\s*(.*)$/.exec(requirement);
    if (match === null) throw new Error(`invalid field selector: ${requirement}`);
    const [, path = "", operator, value = ""] = match;
    return (object) => {
      const actual = path.split(".").reduce<unknown>((node, key) => (node !== null && typeof node === "object" ? Reflect.get(node, key) : undefined), object);
      const text = actual === undefined || actual === null ? "" : String(actual);
      return operator === "!=" ? text !== value : text === value;
    };
  });
  return (object) => tests.every((test) => test(object));
}
