import { baseUrlOf } from "../url-text.js";
import type { KubernetesAction, KubernetesDataSource } from "./schema.js";

/** The API groups read: core (`/api/v1`), apps, discovery.k8s.io and storage.k8s.io (`/apis/<group>/v1`). */
export type ApiGroup = "" | "apps" | "discovery.k8s.io" | "storage.k8s.io";

/**
 * The API path of a list: a namespace's (`namespace` given) or the cluster's, every name a URL component,
 * with its query (`limit`, `labelSelector`) URL-encoded.
 */
export function listUrl(
  dataSource: KubernetesDataSource,
  group: ApiGroup,
  plural: string,
  namespace: string | undefined,
  query: Readonly<Record<string, string>> = {},
): string {
  const prefix = group === "" ? "/api/v1" : `/apis/${group}/v1`;
  const scope = namespace === undefined ? "" : `/namespaces/${encodeURIComponent(namespace)}`;
  const search = new URLSearchParams(query).toString();
  return `${baseUrlOf(dataSource)}${prefix}${scope}/${plural}${search === "" ? "" : `?${search}`}`;
}

/** `labelSelector` for `key=value` pairs (values validated as label values, so nothing to escape but the URL). */
export function labelSelectorText(labels: Readonly<Record<string, string>>): string {
  return Object.entries(labels)
    .map(([key, value]) => `${key}=${value}`)
    .join(",");
}

function selecting(labels: Readonly<Record<string, string>> | undefined): Record<string, string> {
  return labels === undefined || Object.keys(labels).length === 0 ? {} : { labelSelector: labelSelectorText(labels) };
}

export function eventsUrl(dataSource: KubernetesDataSource, namespace: string): string {
  return listUrl(dataSource, "", "events", namespace);
}

export function podsUrl(dataSource: KubernetesDataSource, namespace: string, selector: Readonly<Record<string, string>> | undefined): string {
  return listUrl(dataSource, "", "pods", namespace, selecting(selector));
}

/** One Deployment by name, or the namespace's Deployments (by label). */
export function deploymentsUrl(
  dataSource: KubernetesDataSource,
  namespace: string,
  name: string | undefined,
  selector: Readonly<Record<string, string>> | undefined,
): string {
  return name === undefined
    ? listUrl(dataSource, "apps", "deployments", namespace, selecting(selector))
    : `${listUrl(dataSource, "apps", "deployments", namespace)}/${encodeURIComponent(name)}`;
}

export function replicaSetsUrl(dataSource: KubernetesDataSource, namespace: string, selector: Readonly<Record<string, string>> | undefined): string {
  return listUrl(dataSource, "apps", "replicasets", namespace, selecting(selector));
}

/** A container's last lines (`tailLines`, at most `limitBytes`), of its previous run with `previous`. */
export function podLogUrl(
  dataSource: KubernetesDataSource,
  namespace: string,
  pod: string,
  options: { container: string; tailLines: number; limitBytes: number; previous: boolean },
): string {
  const query = new URLSearchParams({ container: options.container, tailLines: String(options.tailLines), limitBytes: String(options.limitBytes) });
  if (options.previous) query.set("previous", "true");
  return `${listUrl(dataSource, "", "pods", namespace)}/${encodeURIComponent(pod)}/log?${query.toString()}`;
}

/** The first request an action makes: its link (for `state`, the namespace's pods). */
export function kubernetesRequestUrl(dataSource: KubernetesDataSource, action: KubernetesAction): string {
  switch (action.resource) {
    case "events":
      return eventsUrl(dataSource, action.namespace);
    case "pods":
    case "state":
      return podsUrl(dataSource, action.namespace, action.selector);
    case "rollouts":
      return deploymentsUrl(dataSource, action.namespace, action.name, action.selector);
  }
}
