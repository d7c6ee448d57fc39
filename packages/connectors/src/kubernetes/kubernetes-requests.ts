import { baseUrlOf } from "../url-text.js";
import type { KubernetesAction, KubernetesDataSource } from "./schema.js";

/** The API path of a namespace's resources, every name a URL component. */
function namespaced(dataSource: KubernetesDataSource, group: "core" | "apps", namespace: string, plural: string): string {
  const prefix = group === "core" ? "/api/v1" : "/apis/apps/v1";
  return `${baseUrlOf(dataSource)}${prefix}/namespaces/${encodeURIComponent(namespace)}/${plural}`;
}

/** `labelSelector` for `key=value` pairs (values validated as label values, so nothing to escape but the URL). */
export function labelSelectorText(labels: Readonly<Record<string, string>>): string {
  return Object.entries(labels)
    .map(([key, value]) => `${key}=${value}`)
    .join(",");
}

function withSelector(url: string, labels: Readonly<Record<string, string>> | undefined): string {
  if (labels === undefined || Object.keys(labels).length === 0) return url;
  return `${url}?${new URLSearchParams({ labelSelector: labelSelectorText(labels) }).toString()}`;
}

export function eventsUrl(dataSource: KubernetesDataSource, namespace: string): string {
  return namespaced(dataSource, "core", namespace, "events");
}

export function podsUrl(dataSource: KubernetesDataSource, namespace: string, selector: Readonly<Record<string, string>> | undefined): string {
  return withSelector(namespaced(dataSource, "core", namespace, "pods"), selector);
}

/** One Deployment by name, or the namespace's Deployments (by label). */
export function deploymentsUrl(dataSource: KubernetesDataSource, namespace: string, name: string | undefined, selector: Readonly<Record<string, string>> | undefined): string {
  const list = namespaced(dataSource, "apps", namespace, "deployments");
  return name === undefined ? withSelector(list, selector) : `${list}/${encodeURIComponent(name)}`;
}

export function replicaSetsUrl(dataSource: KubernetesDataSource, namespace: string, selector: Readonly<Record<string, string>> | undefined): string {
  return withSelector(namespaced(dataSource, "apps", namespace, "replicasets"), selector);
}

/** The first request an action makes: its link. */
export function kubernetesRequestUrl(dataSource: KubernetesDataSource, action: KubernetesAction): string {
  switch (action.resource) {
    case "events":
      return eventsUrl(dataSource, action.namespace);
    case "pods":
      return podsUrl(dataSource, action.namespace, action.selector);
    case "rollouts":
      return deploymentsUrl(dataSource, action.namespace, action.name, action.selector);
  }
}
