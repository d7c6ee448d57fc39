import { defineConnector } from "../connector-definition.js";
import { KubernetesDataSource, KubernetesAction } from "./schema.js";
import { kubernetesRequestUrl } from "./kubernetes-requests.js";
import { namespaceTemplate, objectNameTemplate, labelValueTemplate } from "./kubernetes-names.js";

/**
 * The kubernetes connector: plain HTTP to the API server through the data source's own client (its CA,
 * token, proxy, deadline and size cap), for read-only lists: events, rollouts, pods, or a namespace's whole
 * state (state-lists.ts).
 */
export const kubernetesConnector = defineConnector({
  type: "kubernetes",
  noun: "a Kubernetes data source",
  builds: "request",
  dataSource: KubernetesDataSource,
  query: KubernetesAction,
  templates: [
    { path: ["namespace"], encoding: namespaceTemplate },
    { path: ["name"], encoding: objectNameTemplate },
    { path: ["selector"], leaves: true, encoding: labelValueTemplate },
  ],
  // A rollout is a ReplicaSet created in the window: a wider window finds older ones.
  reportsChanges: (query) => query.resource === "rollouts",
  // No UI is common to every cluster: the link is the API's list this action read (for state, its pods).
  link: (dataSource, query) => kubernetesRequestUrl(dataSource, query),
  runtime: async () => (await import("./runtime.js")).kubernetesRuntime,
});
