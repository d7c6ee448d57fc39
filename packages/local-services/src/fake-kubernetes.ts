import type { ServerResponse } from "node:http";
import type { ServerOptions as HttpsOptions } from "node:https";
import { sendJson, startTestHttpServer, type TestHttpServer } from "./test-http-server.js";

/** A Kubernetes object as the API serves it (JSON); only `metadata` is read by the fake itself. */
export interface KubernetesObject {
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; [field: string]: unknown };
  [field: string]: unknown;
}

export interface FakeKubernetesObjects {
  /** core/v1 Events (`involvedObject`, `reason`, `message`, `type`, `lastTimestamp`…). */
  events?: readonly KubernetesObject[];
  /** apps/v1 Deployments. */
  deployments?: readonly KubernetesObject[];
  /** apps/v1 ReplicaSets (with `ownerReferences` to their Deployment). */
  replicaSets?: readonly KubernetesObject[];
  /** core/v1 Pods (with `status.containerStatuses`). */
  pods?: readonly KubernetesObject[];
}

export interface FakeKubernetesOptions {
  /** When set, every request must carry `Authorization: Bearer <token>`, else 401 as the API server answers. */
  token?: string;
  /** Serve HTTPS with these options, as an API server does. */
  https?: HttpsOptions;
}

interface Resource {
  group: string;
  plural: string;
  kind: string;
  objects: readonly KubernetesObject[];
}

const NAMESPACED = /^\/(api\/v1|apis\/apps\/v1)\/namespaces\/([^/]+)\/([a-z]+)(?:\/([^/]+))?$/;

/**
 * A Kubernetes API server for tests: a real HTTP server answering the list and get endpoints of events,
 * pods, deployments and replicasets in a namespace, with the API's own JSON (List objects, `Status`
 * errors) and real `labelSelector` (`=`, `==`, `!=`, `in`, `notin`, `key`, `!key`) and
 * `fieldSelector` (`=`, `==`, `!=` on dotted fields) filtering. Anything else is a 404 Status.
 */
export function startFakeKubernetes(objects: FakeKubernetesObjects, options: FakeKubernetesOptions = {}): Promise<TestHttpServer> {
  const resources: Record<string, Resource> = {
    "api/v1/events": { group: "", plural: "events", kind: "Event", objects: objects.events ?? [] },
    "api/v1/pods": { group: "", plural: "pods", kind: "Pod", objects: objects.pods ?? [] },
    "apis/apps/v1/deployments": { group: "apps", plural: "deployments", kind: "Deployment", objects: objects.deployments ?? [] },
    "apis/apps/v1/replicasets": { group: "apps", plural: "replicasets", kind: "ReplicaSet", objects: objects.replicaSets ?? [] },
  };
  return startTestHttpServer(
    (request, response) => {
      if (options.token !== undefined && request.headers.authorization !== `Bearer ${options.token}`) {
        return sendStatus(response, 401, "Unauthorized", "Unauthorized");
      }
      const url = new URL(request.url, "http://fake");
      const match = NAMESPACED.exec(url.pathname);
      const resource = match === null ? undefined : resources[`${match[1]}/${match[3]}`];
      if (request.method !== "GET" || match === null || resource === undefined) {
        return sendStatus(response, 404, "NotFound", "the server could not find the requested resource");
      }
      const namespace = decodeURIComponent(match[2] ?? "");
      const name = match[4] === undefined ? undefined : decodeURIComponent(match[4]);
      const inNamespace = resource.objects.filter((object) => (object.metadata.namespace ?? "default") === namespace);
      const what = resource.group === "" ? resource.plural : `${resource.plural}.${resource.group}`;
      if (name !== undefined) {
        const found = inNamespace.find((object) => object.metadata.name === name);
        if (found === undefined) return sendStatus(response, 404, "NotFound", `${what} "${name}" not found`);
        return sendJson(response, 200, { kind: resource.kind, apiVersion: apiVersion(resource), ...found });
      }
      let labels: Predicate;
      let fields: Predicate;
      try {
        labels = labelSelector(url.searchParams.get("labelSelector") ?? "");
        fields = fieldSelector(url.searchParams.get("fieldSelector") ?? "");
      } catch (error) {
        return sendStatus(response, 400, "BadRequest", error instanceof Error ? error.message : String(error));
      }
      const items = inNamespace.filter((object) => labels(object) && fields(object));
      return sendJson(response, 200, { kind: `${resource.kind}List`, apiVersion: apiVersion(resource), metadata: { resourceVersion: "1" }, items });
    },
    options.https === undefined ? {} : { https: options.https },
  );
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
