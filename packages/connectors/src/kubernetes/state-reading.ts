import type { ContainerLog, ContainerStatus, KubernetesStateObservation, Pod } from "@pes/contracts";
import { z } from "zod";
import type { FetchRequest } from "../connector.js";
import { describeFetchFailure } from "../fetch-failure.js";
import { Failure, type KubernetesClient, kubernetesClient, TARGET } from "./kubernetes-client.js";
import { listUrl, podLogUrl } from "./kubernetes-requests.js";
import { STATE_LISTS, type StateList } from "./state-lists.js";
import type { KubernetesAction, KubernetesDataSource } from "./schema.js";

/** Requests in flight at once: the state is some twenty reads, and an API server under load is often the incident. */
const CONCURRENCY = 4;
/** Containers whose logs are read at most: the most restarted first, then those not ready. */
export const MAX_CONTAINER_LOGS = 10;
/** Each container's last lines, and at most so many bytes of them (a line can be a whole JSON dump). */
export const LOG_TAIL_LINES = 50;
const LOG_LIMIT_BYTES = 32 * 1024;

/** A List answer, its items unparsed: they are cut to the list's limit before they are parsed. */
const AnyList = z.object({ items: z.array(z.unknown()).nullable() });

/**
 * Reads a namespace's state and the cluster's around it (STATE_LISTS), then the last log lines of its
 * containers that restarted or are not ready, at most CONCURRENCY requests at once, all under the action's
 * signal. A list the token may not read (403) is left out, as are the logs when none may be read; the
 * observation fails when every list is refused, on any other error (naming the list), or at the deadline.
 */
export async function readState(
  request: FetchRequest<KubernetesDataSource, KubernetesAction>,
  headers: Readonly<Record<string, string>>,
): Promise<KubernetesStateObservation | Failure> {
  const { dataSource, query: action } = request;
  const { namespace } = action;
  // Stops the reads still in flight once one has failed the observation.
  const stop = new AbortController();
  const client = kubernetesClient(request, headers, AbortSignal.any([request.signal, stop.signal]));
  const run = pool(CONCURRENCY);
  const state: KubernetesStateObservation = { kind: "kubernetes-state", namespace, readAt: new Date().toISOString() };
  const refused: Failure[] = [];
  let failure: Failure | undefined;
  const fail = (reason: string) => {
    failure ??= new Failure(reason);
    stop.abort();
  };

  const readList = async (list: StateList) => {
    const scope = list.scope === "cluster" ? undefined : list.scope === "kube-system" ? "kube-system" : namespace;
    const url = listUrl(dataSource, list.group, list.plural, scope, { limit: String(list.limit) });
    const answer = await run(() => client.json(url, AnyList, list.accept));
    if (answer instanceof Failure) {
      if (answer.status === 403) refused.push(answer);
      else fail(`${list.plural}${scope === undefined ? "" : ` of ${scope}`}: ${answer.reason}`);
      return;
    }
    if (!list.keep(state, (answer.items ?? []).slice(0, list.limit)))
      fail(`${list.plural}${scope === undefined ? "" : ` of ${scope}`}: ${TARGET} answered in a shape this connector does not know`);
  };
  const reads = STATE_LISTS.map(async (list) => {
    await readList(list);
    // The logs need the pods (first in the queue), then take their turn behind the lists already queued.
    if (list.field === "pods" && state.pods !== undefined) {
      const logs = await readLogs(client, run, dataSource, namespace, state.pods);
      if (logs !== undefined) state.containerLogs = logs;
    }
  });
  await Promise.all(reads);

  if (request.signal.aborted) return new Failure(describeFetchFailure(request.signal.reason, request.signal, TARGET));
  if (failure !== undefined) return failure;
  const [firstRefusal] = refused;
  if (firstRefusal !== undefined && refused.length === STATE_LISTS.length) return firstRefusal;
  return state;
}

type Run = <T>(task: () => Promise<T>) => Promise<T>;

/** Runs at most `size` tasks at once, the others in the order they came. */
function pool(size: number): Run {
  let active = 0;
  const waiting: Array<() => void> = [];
  const release = () => {
    const next = waiting.shift();
    // The slot passes to the next task as it is: nothing can take it in between.
    if (next === undefined) active -= 1;
    else next();
  };
  return async (task) => {
    if (active < size) active += 1;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await task();
    } finally {
      release();
    }
  };
}

/** A container worth reading the log of, and which run: the previous one when it restarted. */
interface LogTarget {
  pod: string;
  container: string;
  previous: boolean;
  restarts: number;
}

/**
 * The containers whose last lines say why they fail: those that restarted (their previous run, which
 * ended), those running or exited in error but not ready (their current run). One still waiting to start
 * has written nothing.
 */
export function logTargets(pods: readonly Pod[]): LogTarget[] {
  const targets: LogTarget[] = [];
  for (const pod of pods) {
    const statuses: readonly ContainerStatus[] = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
    for (const status of statuses) {
      const target = { pod: pod.metadata.name, container: status.name, restarts: status.restartCount };
      if (status.restartCount > 0) targets.push({ ...target, previous: true });
      else if (status.ready !== true && (status.state?.running !== undefined || (status.state?.terminated?.exitCode ?? 0) !== 0))
        targets.push({ ...target, previous: false });
    }
  }
  // The most restarted first; a stable sort keeps the pods' order among equals.
  return targets.sort((a, b) => b.restarts - a.restarts).slice(0, MAX_CONTAINER_LOGS);
}

/**
 * The last lines of each target container; a log that cannot be read (gone with its node, refused) is
 * left out, and all of them are when every read was refused (the token may not get `pods/log`).
 */
async function readLogs(
  client: KubernetesClient,
  run: Run,
  dataSource: KubernetesDataSource,
  namespace: string,
  pods: readonly Pod[],
): Promise<ContainerLog[] | undefined> {
  const targets = logTargets(pods);
  let refused = 0;
  const read = async ({ pod, container, previous }: LogTarget): Promise<ContainerLog | undefined> => {
    const url = podLogUrl(dataSource, namespace, pod, { container, previous, tailLines: LOG_TAIL_LINES, limitBytes: LOG_LIMIT_BYTES });
    const text = await run(() => client.text(url));
    if (text instanceof Failure) {
      if (text.status === 403) refused += 1;
      return undefined;
    }
    const lines = text.split("\n");
    if (lines.at(-1) === "") lines.pop();
    return { pod, container, ...(previous ? { previous } : {}), lines };
  };
  const logs = await Promise.all(targets.map(read));
  if (targets.length > 0 && refused === targets.length) return undefined;
  return logs.filter((log) => log !== undefined);
}
