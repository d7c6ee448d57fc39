import type { Container, ContainerStatus, PodSpec, Probe, Toleration } from "@pes/contracts";
import { type DescribeField, describeDate, describeFields, field, isNone, keyValues, listValues, subFields, value } from "./kubectl-text.js";

/**
 * Readers of the parts of `kubectl describe` that show a pod's spec: a pod's own, or the `Pod Template`
 * of a Deployment or ReplicaSet. They print the same fields at different indents.
 */

type Volume = NonNullable<PodSpec["volumes"]>[number];

function portOf(text: string): number | string {
  return /^\d+$/.test(text) ? Number(text) : text;
}

function seconds(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const match = /^(\d+)s?$/.exec(text);
  return match === null ? undefined : Number(match[1]);
}

/**
 * A probe as describe prints it: `http-get http://:8080/_healthz delay=5s timeout=1s period=10s
 * #success=1 #failure=3`, `tcp-socket :6379 …`, `grpc <pod>:9555 …`, `exec [cat /tmp/healthy] …`.
 */
export function parseProbe(text: string): Probe | undefined {
  const trimmed = text.trim();
  if (isNone(trimmed)) return undefined;
  const settings: Record<string, string> = {};
  for (const match of trimmed.matchAll(/(?:^|\s)(#?\w+)=(\S+)/g)) settings[match[1] ?? ""] = match[2] ?? "";
  const timing = {
    ...optional("initialDelaySeconds", seconds(settings.delay)),
    ...optional("timeoutSeconds", seconds(settings.timeout)),
    ...optional("periodSeconds", seconds(settings.period)),
    ...optional("successThreshold", seconds(settings["#success"])),
    ...optional("failureThreshold", seconds(settings["#failure"])),
  };
  const http = /^http-get\s+(https?):\/\/([^/:\s]*):([^/\s]+)(\/\S*)?/.exec(trimmed);
  if (http !== null) {
    return { httpGet: { scheme: (http[1] ?? "http").toUpperCase(), port: portOf(http[3] ?? ""), path: http[4] ?? "/" }, ...timing };
  }
  const tcp = /^tcp-socket\s+[^:\s]*:(\S+)/.exec(trimmed);
  if (tcp !== null) return { tcpSocket: { port: portOf(tcp[1] ?? "") }, ...timing };
  const grpc = /^grpc\s+\S*:(\d+)(?:\s+(\S+))?/.exec(trimmed);
  if (grpc !== null) {
    const service = grpc[2] !== undefined && !grpc[2].includes("=") ? { service: grpc[2] } : {};
    return { grpc: { port: Number(grpc[1]), ...service }, ...timing };
  }
  const exec = /^exec\s+\[(.*?)\]/.exec(trimmed);
  if (exec !== null) return { exec: { command: (exec[1] ?? "").split(/\s+/).filter((word) => word !== "") }, ...timing };
  return Object.keys(timing).length > 0 ? timing : undefined;
}

function optional<K extends string, V>(key: K, found: V | undefined): Partial<Record<K, V>> {
  return found === undefined ? {} : ({ [key]: found } as Partial<Record<K, V>>);
}

/** `8080/TCP, 9090/UDP` → container ports. */
function parsePorts(text: string | undefined): Container["ports"] {
  if (text === undefined) return undefined;
  const ports = text
    .split(",")
    .map((part) => /^\s*(\d+)(?:\/(\w+))?/.exec(part))
    .flatMap((match) => (match === null ? [] : [{ containerPort: Number(match[1]), protocol: match[2] ?? "TCP" }]));
  return ports.length === 0 ? undefined : ports;
}

/**
 * Environment lines: `NAME:  value`, `NAME:  <set to the key 'k' of config map 'cm'>  Optional: false`,
 * `NAME:  <set to the key 'k' in secret 's'>  Optional: false`.
 */
function parseEnv(found: DescribeField | undefined): Container["env"] {
  if (found === undefined || found.lines.length === 0) return undefined;
  const env: NonNullable<Container["env"]> = [];
  for (const line of found.lines) {
    const match = /^\s*([^:\s]+):\s*(.*?)\s*$/.exec(line);
    if (match === null) continue;
    const name = match[1] ?? "";
    const raw = match[2] ?? "";
    const configMap = /^<set to the key '([^']*)' of config map '([^']*)'>(?:\s+Optional:\s*(\w+))?/.exec(raw);
    const secret = /^<set to the key '([^']*)' in secret '([^']*)'>(?:\s+Optional:\s*(\w+))?/.exec(raw);
    if (configMap !== null) {
      env.push({ name, valueFrom: { configMapKeyRef: { key: configMap[1] ?? "", name: configMap[2] ?? "", optional: configMap[3] === "true" } } });
    } else if (secret !== null) {
      env.push({ name, valueFrom: { secretKeyRef: { key: secret[1] ?? "", name: secret[2] ?? "", optional: secret[3] === "true" } } });
    } else {
      env.push({ name, value: raw });
    }
  }
  return env;
}

/** `Environment Variables from:` lines: `name  ConfigMap  Optional: false`. */
function parseEnvFrom(found: DescribeField | undefined): Container["envFrom"] {
  if (found === undefined) return undefined;
  const envFrom: NonNullable<Container["envFrom"]> = [];
  for (const line of found.lines) {
    const match = /^\s*(\S+)\s+(ConfigMap|Secret)(?:\s+Optional:\s*(\w+))?/.exec(line);
    if (match === null) continue;
    const ref = { name: match[1] ?? "", optional: match[3] === "true" };
    envFrom.push(match[2] === "ConfigMap" ? { configMapRef: ref } : { secretRef: ref });
  }
  return envFrom.length === 0 ? undefined : envFrom;
}

/** Mount lines: `/data from redis-data (rw)`. */
function parseMounts(found: DescribeField | undefined): Container["volumeMounts"] {
  if (found === undefined) return undefined;
  const mounts = listValues(found).flatMap((line) => {
    const match = /^(\S+) from (\S+) \((r[ow])/.exec(line);
    return match === null ? [] : [{ mountPath: match[1] ?? "", name: match[2] ?? "", readOnly: match[3] === "ro" }];
  });
  return mounts.length === 0 ? undefined : mounts;
}

function quantities(found: DescribeField | undefined): Record<string, string> | undefined {
  const record = subFields(found);
  return Object.keys(record).length === 0 ? undefined : record;
}

type ContainerState = NonNullable<ContainerStatus["state"]>;

/** `State: Waiting` with `Reason:`, `Message:`, `Exit Code:`, `Started:`, `Finished:` under it. */
function parseState(found: DescribeField | undefined): ContainerState | undefined {
  if (found === undefined) return undefined;
  const details = subFields(found);
  const reason = details.Reason;
  const message = details.Message;
  switch (found.value.trim()) {
    case "Running": {
      const startedAt = describeDate(details.Started ?? "");
      return { running: startedAt === undefined ? {} : { startedAt } };
    }
    case "Waiting":
      return { waiting: { ...optional("reason", reason), ...optional("message", message) } };
    case "Terminated": {
      const exitCode = details["Exit Code"] === undefined ? undefined : Number(details["Exit Code"]);
      return {
        terminated: {
          ...optional("reason", reason),
          ...optional("message", message),
          ...optional("exitCode", Number.isNaN(exitCode) ? undefined : exitCode),
          ...optional("startedAt", describeDate(details.Started ?? "")),
          ...optional("finishedAt", describeDate(details.Finished ?? "")),
        },
      };
    }
    default:
      return undefined;
  }
}

/** A pod's containers and, when describe shows them (a pod, not a template), their statuses. */
export function parseContainers(found: DescribeField | undefined): { containers: Container[]; statuses: ContainerStatus[] } {
  const containers: Container[] = [];
  const statuses: ContainerStatus[] = [];
  if (found === undefined) return { containers, statuses };
  for (const entry of describeFields(found.lines)) {
    const fields = describeFields(entry.lines);
    const name = entry.key;
    const image = value(fields, "Image");
    const limits = quantities(field(fields, "Limits"));
    const requests = quantities(field(fields, "Requests"));
    const command = listValues(field(fields, "Command"));
    const args = listValues(field(fields, "Args"));
    const container: Container = {
      name,
      ...optional("image", image),
      ...optional("command", command.length === 0 ? undefined : command),
      ...optional("args", args.length === 0 ? undefined : args),
      ...optional("ports", parsePorts(value(fields, "Port") ?? value(fields, "Ports"))),
      ...optional("env", parseEnv(field(fields, "Environment"))),
      ...optional("envFrom", parseEnvFrom(field(fields, "Environment Variables from"))),
      ...(limits === undefined && requests === undefined ? {} : { resources: { ...optional("limits", limits), ...optional("requests", requests) } }),
      ...optional("livenessProbe", parseProbe(value(fields, "Liveness") ?? "")),
      ...optional("readinessProbe", parseProbe(value(fields, "Readiness") ?? "")),
      ...optional("startupProbe", parseProbe(value(fields, "Startup") ?? "")),
      ...optional("volumeMounts", parseMounts(field(fields, "Mounts"))),
    };
    containers.push(container);
    const restarts = value(fields, "Restart Count");
    const state = parseState(field(fields, "State"));
    if (restarts !== undefined || state !== undefined) {
      const ready = value(fields, "Ready");
      const started = value(fields, "Started");
      const lastState = parseState(field(fields, "Last State"));
      statuses.push({
        name,
        restartCount: restarts === undefined ? 0 : Number(restarts),
        ...optional("ready", ready === undefined ? undefined : ready === "True"),
        ...optional("started", started === undefined ? undefined : started === "True"),
        ...optional("image", image),
        ...optional("state", state),
        ...optional("lastState", lastState),
      });
    }
  }
  return { containers, statuses };
}

/**
 * Tolerations: `node.kubernetes.io/not-ready:NoExecute op=Exists for 300s`, `dedicated=gpu:NoSchedule`,
 * `op=Exists` (every taint).
 */
export function parseTolerations(lines: readonly string[]): Toleration[] {
  return lines.flatMap((line) => {
    // A toleration of every taint has no key: `op=Exists`, or `:NoSchedule op=Exists` for every taint of an effect.
    const text = line.trim().startsWith("op=") ? ` ${line.trim()}` : line.trim();
    const match = /^([^=:\s]*)(?:=([^:\s]*))?(?::(\w+))?(?:\s+op=(\w+))?/.exec(text);
    if (match === null) return [];
    const [, key, tolerated, effect, operator] = match;
    return [
      {
        ...(key === undefined || key === "" ? {} : { key }),
        operator: operator ?? "Equal",
        ...optional("value", tolerated),
        ...(effect === undefined || effect === "" ? {} : { effect }),
      },
    ];
  });
}

/** Taints: `key=value:NoSchedule`, `node.kubernetes.io/unschedulable:NoSchedule`. */
export function parseTaints(lines: readonly string[]): Array<{ key: string; value?: string; effect: string }> {
  return lines.flatMap((line) => {
    const match = /^([^=:\s]+)(?:=([^:\s]*))?:(\w+)$/.exec(line.trim());
    if (match === null) return [];
    return [{ key: match[1] ?? "", ...optional("value", match[2]), effect: match[3] ?? "" }];
  });
}

/** The Volumes section: each volume's name and source (claims, ConfigMaps, Secrets, host paths, empty dirs). */
export function parseVolumes(found: DescribeField | undefined): Volume[] | undefined {
  if (found === undefined) return undefined;
  const volumes = describeFields(found.lines).map((entry): Volume => {
    const fields = describeFields(entry.lines);
    const type = value(fields, "Type") ?? "";
    const name = entry.key;
    if (type.startsWith("PersistentVolumeClaim")) return { name, persistentVolumeClaim: { claimName: value(fields, "ClaimName") ?? "" } };
    if (type.startsWith("ConfigMap")) return { name, configMap: { name: value(fields, "Name") ?? "", optional: value(fields, "Optional") === "true" } };
    if (type.startsWith("Secret")) return { name, secret: { secretName: value(fields, "SecretName") ?? "", optional: value(fields, "Optional") === "true" } };
    if (type.startsWith("HostPath")) return { name, hostPath: { path: value(fields, "Path") ?? "" } };
    if (type.startsWith("EmptyDir")) return { name, emptyDir: {} };
    return { name };
  });
  return volumes.length === 0 ? undefined : volumes;
}

/**
 * A pod spec from describe fields (a pod's, or a template's): service account, node selectors,
 * tolerations, containers, init containers, volumes. Affinity and image pull secrets are not printed.
 */
export function parsePodSpecFields(fields: readonly DescribeField[]): { spec: PodSpec; statuses: ContainerStatus[]; initStatuses: ContainerStatus[] } {
  const { containers, statuses } = parseContainers(field(fields, "Containers"));
  const init = parseContainers(field(fields, "Init Containers"));
  const nodeSelector = keyValues(listValues(field(fields, "Node-Selectors")));
  const tolerations = parseTolerations(listValues(field(fields, "Tolerations")));
  const serviceAccountName = value(fields, "Service Account");
  const spec: PodSpec = {
    containers,
    ...optional("initContainers", init.containers.length === 0 ? undefined : init.containers),
    ...optional("serviceAccountName", serviceAccountName),
    ...optional("nodeSelector", Object.keys(nodeSelector).length === 0 ? undefined : nodeSelector),
    ...optional("tolerations", tolerations.length === 0 ? undefined : tolerations),
    ...optional("volumes", parseVolumes(field(fields, "Volumes"))),
  };
  return { spec, statuses, initStatuses: init.statuses };
}
