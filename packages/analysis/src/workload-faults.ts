import type { Container, ContainerStatus, KubernetesEvent, Pod, Probe } from "@pes/contracts";
import { pullFailureKind } from "./container-failures.js";
import { oneLine } from "./plain-text.js";
import { eventOnset, eventTime, isShort, someOf, type ClusterIndex, type Fault, type Workload } from "./cluster-index.js";

/**
 * Why the API server refuses a workload's pods, while it is short of them: its ReplicaSet's (or
 * StatefulSet's) latest FailedCreate, read for a quota or a missing ServiceAccount. A refusal the
 * workload has recovered from (all its pods made since) is history, not a fault.
 */
export function admissionFaults(index: ClusterIndex, workload: Workload): Fault[] {
  if (!isShort(workload) || workload.pods.length >= (workload.desired ?? 1)) return [];
  const refusals = refusalsOf(index, workload);
  const latest = refusals.at(-1);
  const message = latest?.message;
  if (latest === undefined || message === undefined) return [];
  const onset = eventOnset(refusals[0] ?? latest);
  const dated = onset === undefined ? {} : { onset };
  const quota = /exceeded quota: ([^,]+), requested: ([^,]+?)(?:, used: ([^,]+?))?(?:, limited: (.+))?$/.exec(
    message.replace(/^\(combined from similar events\): /, ""),
  );
  if (quota !== null) {
    const resource = quotaResource(quota[2] ?? "");
    return [
      {
        subject: `namespace/${index.namespace}`,
        mechanism: `quota/${resource}`,
        detail: `"${excerpt(message)}"`,
        remedy: `Raise ${quota[1]}'s limit in ${index.namespace} (${(quota[4] ?? "").trim()}), or lower what ${workload.ref} requests`,
        certainty: "decisive",
        affects: [workload.ref],
        ...dated,
      },
    ];
  }
  const account = /serviceaccount "([^"]+)" not found/i.exec(message);
  if (account !== null) {
    const name = account[1] ?? "";
    // The account made since: the refusals were the namespace's own start-up.
    if (index.state.serviceAccounts?.includes(name) === true) return [];
    return [
      {
        subject: workload.ref,
        mechanism: "admission/service-account",
        detail: `"${excerpt(message)}"`,
        remedy: `Create the ServiceAccount ${name} in ${index.namespace}, or set serviceAccountName of ${workload.ref} to one that exists`,
        certainty: "decisive",
        affects: [workload.ref],
        ...dated,
      },
    ];
  }
  return [
    {
      subject: workload.ref,
      mechanism: "admission/refused",
      detail: `"${excerpt(message)}"`,
      remedy: `Fix what the API server refuses in ${workload.ref}'s pods`,
      certainty: "decisive",
      affects: [workload.ref],
      ...dated,
    },
  ];
}

/** The FailedCreate events of a workload's ReplicaSets (or of the StatefulSet itself), oldest first. */
function refusalsOf(index: ClusterIndex, workload: Workload): KubernetesEvent[] {
  const events = (index.state.events ?? []).filter((event) => {
    if (event.reason !== "FailedCreate" || event.message === undefined) return false;
    const { kind, name } = event.involvedObject;
    if (name === undefined) return false;
    if (kind === "ReplicaSet") return index.workloadOfReplicaSet(name)?.ref === workload.ref;
    return `${(kind ?? "").toLowerCase()}/${name}` === workload.ref;
  });
  return events.sort((a, b) => eventTime(a) - eventTime(b));
}

/** The quota's resource from "requests.cpu=1", "limits.memory=300Mi", "pods=1", "requests.storage=5Gi", "services=1". */
function quotaResource(requested: string): string {
  const name = (requested.split(",")[0] ?? "").split("=")[0]?.trim() ?? "";
  if (/cpu/.test(name)) return "cpu";
  if (/memory/.test(name)) return "memory";
  if (/storage|persistentvolumeclaims/.test(name)) return "storage";
  if (/services/.test(name)) return "services";
  if (/pods/.test(name)) return "pods";
  return name.replace(/^count\//, "") || "other";
}

function excerpt(text: string, most = 300): string {
  return oneLine(text, most);
}

/** What one of a workload's pods shows is wrong with it, if anything. */
interface PodFault {
  mechanism: string;
  detail: string;
  remedy: string;
  onset?: Date;
}

/**
 * Why a workload's placed pods do not run or are not ready: an image that cannot be pulled, a ConfigMap
 * or Secret that is missing, a container killed for memory or failing to start, a probe that checks the
 * wrong port or protocol or gives up too soon. Each troubled pod is read; the mechanism most of them
 * show is the workload's.
 */
export function containerFaults(index: ClusterIndex, workload: Workload): Fault[] {
  const found = new Map<string, { fault: PodFault; pods: string[] }>();
  for (const pod of workload.pods) {
    if ((pod.spec?.nodeName ?? "") === "" && pod.status?.phase === "Pending" && (pod.status.containerStatuses ?? []).length === 0) continue;
    const fault = podFault(index, workload, pod);
    if (fault === undefined) continue;
    const entry = found.get(fault.mechanism) ?? { fault, pods: [] };
    entry.pods.push(`pod/${pod.metadata.name}`);
    found.set(fault.mechanism, entry);
  }
  const [top] = [...found.values()].sort((a, b) => b.pods.length - a.pods.length);
  if (top === undefined) return [];
  const { fault } = top;
  return [{ subject: workload.ref, ...fault, certainty: "decisive", affects: someOf(top.pods) }];
}

function podFault(index: ClusterIndex, workload: Workload, pod: Pod): PodFault | undefined {
  const events = index.eventsAbout("Pod", pod.metadata.name);
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  for (const status of statuses) {
    const fault = waitingFault(workload, status, events, index.state.secrets) ?? terminatedFault(index, workload, pod, status, events);
    if (fault !== undefined) return fault;
  }
  const sandbox = events.filter((event) => /FailedCreatePodSandBox|FailedMount|FailedAttachVolume/.test(event.reason ?? "")).at(-1);
  if (sandbox?.message !== undefined && pod.status?.phase === "Pending") return sandboxFault(workload, sandbox);
  return probeFault(workload, pod, statuses, events);
}

const PULLING = new Set(["ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull", "RegistryUnavailable"]);

function waitingFault(
  workload: Workload,
  status: ContainerStatus,
  events: readonly KubernetesEvent[],
  secrets: readonly string[] | undefined,
): PodFault | undefined {
  const waiting = status.state?.waiting;
  if (waiting?.reason === undefined) return undefined;
  if (PULLING.has(waiting.reason)) {
    // "Error: ErrImagePull" says only that it failed; "Failed to pull image …" says why.
    const said = [...events].reverse().find((event) => /failed to pull/i.test(event.message ?? ""))?.message ?? waiting.message ?? waiting.reason;
    const image = status.image ?? /image "([^"]+)"/.exec(said)?.[1] ?? "its image";
    const missingSecret = (workload.spec?.imagePullSecrets ?? []).map(({ name }) => name).find((name) => secrets !== undefined && !secrets.includes(name));
    const mechanism = missingSecret === undefined ? pullFailureKind(waiting.reason, said) : "image-pull/unauthorized";
    const onset = pullOnset(events);
    const note = missingSecret === undefined ? "" : `imagePullSecrets names ${missingSecret}, which does not exist; `;
    return {
      mechanism,
      detail: `${note}${status.name}: "${excerpt(said)}"`,
      remedy: pullRemedy(mechanism, workload.ref, image, missingSecret),
      ...(onset === undefined ? {} : { onset }),
    };
  }
  if (waiting.reason === "CreateContainerConfigError" || waiting.reason === "CreateContainerError") {
    const said = waiting.message ?? [...events].reverse().find((event) => event.reason === "Failed")?.message ?? waiting.reason;
    return (
      configFault(workload, said) ?? {
        mechanism: "start/failed",
        detail: `${status.name}: "${excerpt(said)}"`,
        remedy: `Fix what keeps ${workload.ref}'s container ${status.name} from being created`,
      }
    );
  }
  return undefined;
}

function pullOnset(events: readonly KubernetesEvent[]): Date | undefined {
  const first = events.find((event) => event.reason === "Failed" || event.reason === "BackOff");
  return first === undefined ? undefined : eventOnset(first);
}

function pullRemedy(mechanism: string, workload: string, image: string, missingSecret: string | undefined): string {
  if (missingSecret !== undefined)
    return `Create the Secret ${missingSecret} with the registry's credentials for ${image}, or fix ${workload}'s imagePullSecrets`;
  switch (mechanism) {
    case "image-pull/dns":
      return `Point ${workload}'s image ${image} at a registry whose name resolves from the nodes (or fix the nodes' DNS)`;
    case "image-pull/unauthorized":
      return `Add an imagePullSecret with the registry's credentials to ${workload} (or its ServiceAccount) for ${image}`;
    case "image-pull/not-found":
      return `Fix the image reference of ${workload} (${image}): that tag or repository does not exist`;
    default:
      return `Check that the nodes can pull ${image} for ${workload}`;
  }
}

function configFault(workload: Workload, message: string): PodFault | undefined {
  const configMap = /configmap "([^"]+)" not found/i.exec(message);
  if (configMap !== null) {
    return {
      mechanism: "config/missing-configmap",
      detail: `"${excerpt(message)}"`,
      remedy: `Restore the ConfigMap ${configMap[1]} that ${workload.ref} reads, or make the reference optional`,
    };
  }
  const secret = /secret "([^"]+)" not found/i.exec(message);
  if (secret !== null) {
    return {
      mechanism: "config/missing-secret",
      detail: `"${excerpt(message)}"`,
      remedy: `Restore the Secret ${secret[1]} that ${workload.ref} reads, or make the reference optional`,
    };
  }
  return undefined;
}

function sandboxFault(workload: Workload, event: KubernetesEvent): PodFault | undefined {
  const message = event.message ?? "";
  const onset = eventOnset(event);
  const dated = onset === undefined ? {} : { onset };
  const config = configFault(workload, message);
  if (config !== undefined) return { ...config, ...dated };
  if (/oom|out of memory|memory limit/i.test(message)) {
    return { mechanism: "oom", detail: `"${excerpt(message)}"`, remedy: `Raise the memory limit of ${workload.ref} above what it needs to start`, ...dated };
  }
  return undefined;
}

/** A container that ran and ended: killed for memory, a command not in the image, a permission refused. */
function terminatedFault(index: ClusterIndex, workload: Workload, pod: Pod, status: ContainerStatus, events: readonly KubernetesEvent[]): PodFault | undefined {
  const ended = status.state?.terminated ?? status.lastState?.terminated;
  const looping = status.state?.waiting?.reason === "CrashLoopBackOff" || status.state?.terminated !== undefined;
  if (ended === undefined || (!looping && status.restartCount === 0)) return undefined;
  const onset = failingSince(pod, events);
  const dated = onset === undefined ? {} : { onset };
  const limit = containerOf(workload, status.name)?.resources?.limits?.memory;
  // The runtime's own words when the container's init is killed before it runs: "container init was OOM-killed".
  if (ended.reason === "OOMKilled" || /oom-killed|out of memory/i.test(ended.message ?? "")) {
    return {
      mechanism: "oom",
      detail: `${status.name}: OOMKilled (exit ${ended.exitCode ?? 137})${limit === undefined ? "" : `, memory limit ${limit}`}`,
      remedy: `Raise the memory limit of ${workload.ref}${limit === undefined ? "" : ` (${limit})`}, or find what grows`,
      ...dated,
    };
  }
  const said = `${ended.message ?? ""} ${ended.reason ?? ""}`;
  if (
    /executable file not found|no such file or directory|not found in \$PATH/i.test(said) ||
    ended.reason === "StartError" ||
    ended.reason === "ContainerCannotRun"
  ) {
    return {
      mechanism: "start/command-not-found",
      detail: `${status.name}: "${excerpt(ended.message ?? ended.reason ?? "")}"`,
      remedy: `Fix the command of ${workload.ref}'s container ${status.name}: it is not in the image`,
      ...dated,
    };
  }
  const logs = (index.state.containerLogs ?? []).filter((log) => log.pod === pod.metadata.name && log.container === status.name).flatMap((log) => log.lines);
  const denied = logs.find((line) => /permission denied|operation not permitted|read-only file system|EACCES/i.test(line));
  if (denied !== undefined && looping) {
    return {
      mechanism: "start/permission-denied",
      detail: `${status.name}: "${excerpt(denied, 200)}"`,
      remedy: `Give ${workload.ref}'s container ${status.name} access to its files or volume (fsGroup, runAsUser, or the volume's permissions)`,
      ...dated,
    };
  }
  // A liveness probe's kills read as exit 137 or 143 after "Unhealthy": the probe, not the program.
  const killedByProbe = events.some((event) => event.reason === "Unhealthy" && /liveness/i.test(event.message ?? ""));
  if (killedByProbe) return undefined;
  if (status.state?.waiting?.reason !== "CrashLoopBackOff") return undefined;
  const last = denied ?? logs.at(-1);
  return {
    mechanism: "crash-loop",
    detail: `${status.name}: exit ${ended.exitCode ?? "?"}${ended.reason === undefined ? "" : ` (${ended.reason})`}${last === undefined ? "" : `; last log line "${excerpt(last, 200)}"`}`,
    remedy: `Read the logs of ${workload.ref}'s container ${status.name} (kubectl logs --previous) and fix why it exits`,
    ...dated,
  };
}

/**
 * When a pod's containers began failing: its first warning (a back-off, a failed start), else when it
 * started. A terminated state's own start is no date when the container never ran (the runtime writes the
 * epoch).
 */
function failingSince(pod: Pod, events: readonly KubernetesEvent[]): Date | undefined {
  const first = events.find((event) => event.type === "Warning" || event.reason === "BackOff" || event.reason === "Failed");
  const onset = first === undefined ? undefined : eventOnset(first);
  if (onset !== undefined) return onset;
  return pod.status?.startTime === undefined ? undefined : new Date(pod.status.startTime);
}

function containerOf(workload: Workload, name: string): Container | undefined {
  return [...(workload.spec?.initContainers ?? []), ...(workload.spec?.containers ?? [])].find((container) => container.name === name);
}

/**
 * A probe that keeps a pod restarting (liveness, with restarts) or not ready (readiness): against a port
 * the container does not declare, in a protocol its port does not speak, else giving up too soon.
 */
function probeFault(workload: Workload, pod: Pod, statuses: readonly ContainerStatus[], events: readonly KubernetesEvent[]): PodFault | undefined {
  const failing = (kind: "Liveness" | "Readiness") =>
    events.filter((event) => event.reason === "Unhealthy" && (event.message ?? "").startsWith(`${kind} probe failed`));
  const restarted = statuses.some((status) => status.restartCount > 0);
  const unready =
    statuses.some((status) => status.ready === false) ||
    pod.status?.conditions?.some((condition) => condition.type === "Ready" && condition.status === "False") === true;
  const liveness = failing("Liveness");
  if (restarted && liveness.length > 0) return probeMechanism(workload, "liveness", liveness);
  const readiness = failing("Readiness");
  if (unready && readiness.length > 0) return probeMechanism(workload, "readiness", readiness);
  return undefined;
}

function probeMechanism(workload: Workload, kind: "liveness" | "readiness", events: readonly KubernetesEvent[]): PodFault {
  const said = events.at(-1)?.message ?? "";
  const onset = eventOnset(events[0] ?? (events.at(-1) as KubernetesEvent));
  const dated = onset === undefined ? {} : { onset };
  const container = (workload.spec?.containers ?? []).find((one) => (kind === "liveness" ? one.livenessProbe : one.readinessProbe) !== undefined);
  const probe = container === undefined ? undefined : kind === "liveness" ? container.livenessProbe : container.readinessProbe;
  const field = `${kind}Probe`;
  const port = probe === undefined ? undefined : probePort(probe);
  const ports = container?.ports ?? [];
  const portKnown = port === undefined || ports.length === 0 || ports.some((one) => one.containerPort === port || one.name === port);
  if (!portKnown) {
    return {
      mechanism: `probe/${kind}-port`,
      detail: `${field} port ${port}, container ${container?.name} serves ${ports.map((one) => one.containerPort).join(", ")}; "${excerpt(said, 200)}"`,
      remedy: `Point ${workload.ref}'s ${field} at port ${ports[0]?.containerPort ?? "the container's"}`,
      ...dated,
    };
  }
  if (probe !== undefined && wrongProtocol(probe, said, ports)) {
    return {
      mechanism: `probe/${kind}-protocol`,
      detail: `${field} ${probeType(probe)} on port ${port}; "${excerpt(said, 200)}"`,
      remedy: `Probe ${workload.ref}'s port ${port} in the protocol it serves (${probe.httpGet !== undefined ? "grpc or tcpSocket instead of httpGet" : "httpGet or tcpSocket"})`,
      ...dated,
    };
  }
  const timing =
    probe === undefined
      ? ""
      : `initialDelaySeconds ${probe.initialDelaySeconds ?? 0}, timeoutSeconds ${probe.timeoutSeconds ?? 1}, periodSeconds ${probe.periodSeconds ?? 10}, failureThreshold ${probe.failureThreshold ?? 3}; `;
  return {
    mechanism: `probe/${kind}-timing`,
    detail: `${field} ${timing}"${excerpt(said, 200)}"`,
    remedy: `Give ${workload.ref}'s ${field} time to answer: a longer initialDelaySeconds and timeoutSeconds (or a startupProbe)`,
    ...dated,
  };
}

function probePort(probe: Probe): number | string | undefined {
  return probe.httpGet?.port ?? probe.tcpSocket?.port ?? probe.grpc?.port;
}

function probeType(probe: Probe): string {
  return probe.httpGet !== undefined ? "httpGet" : probe.grpc !== undefined ? "grpc" : probe.tcpSocket !== undefined ? "tcpSocket" : "exec";
}

/** An HTTP probe answered in another protocol (gRPC's HTTP/2 frames), or a gRPC probe answered by HTTP/1. */
function wrongProtocol(probe: Probe, message: string, ports: NonNullable<Container["ports"]>): boolean {
  if (probe.httpGet !== undefined) {
    const named = ports.find((one) => one.containerPort === probe.httpGet?.port || one.name === probe.httpGet?.port)?.name ?? "";
    return (
      /malformed HTTP|transport connection broken|HTTP\/1\.x|server gave HTTP response to HTTPS|http: server gave|EOF|connection reset by peer/i.test(
        message,
      ) || /grpc/i.test(named)
    );
  }
  if (probe.grpc !== undefined) return /http2|frame|unexpected HTTP status|not implement|Unimplemented|malformed/i.test(message);
  return false;
}
