import { Deployment, errorMessage, KubernetesEvent, Pod, ReplicaSet, type FailedObservation } from "@pes/contracts";
import type { ConnectorRuntime } from "../connector.js";
import { authorizationHeader } from "../http-auth.js";
import { Failure, kubernetesClient, TARGET } from "./kubernetes-client.js";
import { deploymentsUrl, eventsUrl, podsUrl, replicaSetsUrl } from "./kubernetes-requests.js";
import { listOf } from "./kubernetes-response.js";
import { readState } from "./state-reading.js";
import type { KubernetesAction, KubernetesDataSource } from "./schema.js";

/**
 * Reads one namespace's events, Deployments (and their ReplicaSets), pods, or its whole state from the
 * API server, as list items; the analysis finds what happened in the window. Any failure is a `failed`
 * with the API server's own message.
 */
export const kubernetesRuntime: ConnectorRuntime<KubernetesDataSource, KubernetesAction> = {
  async fetch(request) {
    const { dataSource, query: action } = request;
    const failed = (reason: string): FailedObservation => ({ kind: "failed", reason });
    let headers: Record<string, string>;
    try {
      headers = { accept: "application/json", ...authorizationHeader(dataSource.auth, request.secrets) };
    } catch (error) {
      return failed(`cannot authenticate to ${TARGET}: ${errorMessage(error)}`);
    }
    const client = kubernetesClient(request, headers);
    const { namespace, name, selector } = action;
    const named = name === undefined ? {} : { name };

    switch (action.resource) {
      case "events": {
        const list = await client.json(eventsUrl(dataSource, namespace), listOf(KubernetesEvent));
        return list instanceof Failure ? failed(list.reason) : { kind: "kubernetes-events", items: list.items, ...named };
      }
      case "pods": {
        const list = await client.json(podsUrl(dataSource, namespace, selector), listOf(Pod));
        return list instanceof Failure ? failed(list.reason) : { kind: "kubernetes-pods", items: list.items, ...named };
      }
      case "rollouts": {
        const deployments =
          name === undefined
            ? await client.json(deploymentsUrl(dataSource, namespace, undefined, selector), listOf(Deployment))
            : await client.json(deploymentsUrl(dataSource, namespace, name, undefined), Deployment);
        if (deployments instanceof Failure) return failed(deployments.reason);
        const items = "items" in deployments ? deployments.items : [deployments];
        if (items.length === 0) return { kind: "kubernetes-rollouts", deployments: [], replicaSets: [] };
        // One Deployment: its own ReplicaSets (its selector's labels); several: the namespace's, by owner.
        const only = items.length === 1 ? items[0]?.spec.selector?.matchLabels : undefined;
        const replicaSets = await client.json(replicaSetsUrl(dataSource, namespace, only), listOf(ReplicaSet));
        if (replicaSets instanceof Failure) return failed(replicaSets.reason);
        return { kind: "kubernetes-rollouts", deployments: items, replicaSets: replicaSets.items };
      }
      case "state": {
        const state = await readState(request, headers);
        return state instanceof Failure ? failed(state.reason) : state;
      }
    }
  },
};
