import { Deployment, errorMessage, KubernetesEvent, Pod, ReplicaSet, type FailedObservation } from "@pes/contracts";
import type { z } from "zod";
import type { ConnectorRuntime, FetchRequest } from "../connector.js";
import { answeredError } from "../error-answer.js";
import { describeFetchFailure } from "../fetch-failure.js";
import { authorizationHeader } from "../http-auth.js";
import { answerText, MAX_RESPONSE_BYTES } from "../http-client.js";
import { deploymentsUrl, eventsUrl, podsUrl, replicaSetsUrl } from "./kubernetes-requests.js";
import { KubernetesStatus, listOf } from "./kubernetes-response.js";
import type { KubernetesAction, KubernetesDataSource } from "./schema.js";

const TARGET = "Kubernetes";

type Request = FetchRequest<KubernetesDataSource, KubernetesAction>;
type Get = <T>(url: string, schema: z.ZodType<T>) => Promise<T | Failure>;

/** Why a request gave nothing usable, in plain words. */
class Failure {
  constructor(readonly reason: string) {}
}

/**
 * Reads one namespace's events, Deployments (and their ReplicaSets) or pods from the API server, as
 * list items; the analysis finds what happened in the window. Any failure is a `failed` with the API
 * server's own message.
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
    const get: Get = (url, schema) => getJson(request, headers, url, schema);
    const { namespace, name, selector } = action;
    const named = name === undefined ? {} : { name };

    switch (action.resource) {
      case "events": {
        const list = await get(eventsUrl(dataSource, namespace), listOf(KubernetesEvent));
        return list instanceof Failure ? failed(list.reason) : { kind: "kubernetes-events", items: list.items, ...named };
      }
      case "pods": {
        const list = await get(podsUrl(dataSource, namespace, selector), listOf(Pod));
        return list instanceof Failure ? failed(list.reason) : { kind: "kubernetes-pods", items: list.items, ...named };
      }
      case "rollouts": {
        const deployments =
          name === undefined
            ? await get(deploymentsUrl(dataSource, namespace, undefined, selector), listOf(Deployment))
            : await get(deploymentsUrl(dataSource, namespace, name, undefined), Deployment);
        if (deployments instanceof Failure) return failed(deployments.reason);
        const items = "items" in deployments ? deployments.items : [deployments];
        if (items.length === 0) return { kind: "kubernetes-rollouts", deployments: [], replicaSets: [] };
        // One Deployment: its own ReplicaSets (its selector's labels); several: the namespace's, by owner.
        const only = items.length === 1 ? items[0]?.spec.selector?.matchLabels : undefined;
        const replicaSets = await get(replicaSetsUrl(dataSource, namespace, only), listOf(ReplicaSet));
        if (replicaSets instanceof Failure) return failed(replicaSets.reason);
        return { kind: "kubernetes-rollouts", deployments: items, replicaSets: replicaSets.items };
      }
    }
  },
};

/** One GET: the parsed answer, or a Failure with the API server's Status message. */
async function getJson<T>(request: Request, headers: Record<string, string>, url: string, schema: z.ZodType<T>): Promise<T | Failure> {
  const { http, signal } = request;
  try {
    const answer = await http.request(url, { method: "GET", headers, signal });
    let json: unknown;
    try {
      json = JSON.parse(answerText(answer.body));
    } catch {
      json = undefined;
    }
    if (answer.status < 200 || answer.status > 299) {
      const status = KubernetesStatus.safeParse(json);
      return new Failure(answeredError(TARGET, answer, status.success ? status.data.message : undefined));
    }
    if (json === undefined) return new Failure(`${TARGET} answered with something that is not JSON`);
    const parsed = schema.safeParse(json);
    return parsed.success ? parsed.data : new Failure(`${TARGET} answered in a shape this connector does not know`);
  } catch (error) {
    return new Failure(describeFetchFailure(error, signal, TARGET, MAX_RESPONSE_BYTES));
  }
}
