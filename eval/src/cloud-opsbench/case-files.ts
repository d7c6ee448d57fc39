import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * What a Cloud-OpsBench case directory holds, read once and indexed by what was asked: kubectl's
 * outputs (`raw_data/k8s_states.json`, command → text) and the tool calls of its cache
 * (`tool_cache.json`, call → output) are the same kind of answers, so both land in one index:
 * describe texts per resource type and name, list tables per resource type and namespace. Any file or
 * key may be absent; nothing here fails on a missing one.
 */
export interface CaseFiles {
  /** `describe <type> <name>` texts: type (plural, as kubectl's aliases resolve it) → name → text. */
  describe: Map<string, Map<string, string>>;
  /** `get <type> -n <ns>` tables: `type namespace` → text (`-o wide` under `type namespace wide`). */
  lists: Map<string, string>;
  /** Event listings of any namespace, each with its namespace. */
  eventLists: Array<{ namespace: string; text: string }>;
  /** The manifests GetAppYAML answered, per app. */
  appYamls: Map<string, string>;
  /** What GetServiceDependencies answered (who calls a service, and what it calls), per service. */
  dependencies: Map<string, string>;
  /** systemctl status of node services (CheckNodeServiceStatus), per node and service. */
  nodeServices: Array<{ node: string; service: string; text: string }>;
  /** When the state was collected, as written (a local time without its zone). */
  collectionTimestamp?: string;
  /** The namespaces named by the calls, most named first. */
  namespaces: string[];
  /** `raw_data/logs.json`: service → lines. */
  logs?: Record<string, string[]>;
  /** `raw_data/alert.json`, or the cache's GetAlerts answer. */
  alerts?: unknown;
  /** `raw_data/metrics.csv`. */
  metricsCsv?: string;
  /** The task's question (metadata.json `query`): the symptom the benchmark gives an agent, never its answer. */
  query?: string;
}

/** kubectl's resource names and short names, as evaluation.py's RESOURCE_ALIASES_DB resolves them. */
const RESOURCE_TYPES: Record<string, string> = {
  pod: "pods",
  po: "pods",
  service: "services",
  svc: "services",
  deployment: "deployments",
  deploy: "deployments",
  statefulset: "statefulsets",
  sts: "statefulsets",
  daemonset: "daemonsets",
  ds: "daemonsets",
  configmap: "configmaps",
  cm: "configmaps",
  secret: "secrets",
  persistentvolumeclaim: "persistentvolumeclaims",
  pvc: "persistentvolumeclaims",
  replicaset: "replicasets",
  rs: "replicasets",
  serviceaccount: "serviceaccounts",
  sa: "serviceaccounts",
  endpoint: "endpoints",
  ep: "endpoints",
  persistentvolume: "persistentvolumes",
  pv: "persistentvolumes",
  namespace: "namespaces",
  ns: "namespaces",
  node: "nodes",
  no: "nodes",
  storageclass: "storageclasses",
  sc: "storageclasses",
  event: "events",
  resourcequota: "resourcequotas",
  quota: "resourcequotas",
};

export function resourceType(name: string): string {
  const lower = name.trim().toLowerCase();
  return RESOURCE_TYPES[lower] ?? lower;
}

function readJson(path: string): unknown {
  if (!existsSync(path)) return undefined;
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function text(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (value === undefined || value === null) return undefined;
  return JSON.stringify(value);
}

/** Reads a case directory (`<checkout>/benchmark/<system>/<category>/<n>`). */
export function readCaseFiles(directory: string): CaseFiles {
  const files: CaseFiles = {
    describe: new Map(),
    lists: new Map(),
    eventLists: [],
    appYamls: new Map(),
    dependencies: new Map(),
    nodeServices: [],
    namespaces: [],
  };
  const namespaceCounts = new Map<string, number>();
  const countNamespace = (namespace: string | undefined) => {
    if (namespace !== undefined && namespace !== "") namespaceCounts.set(namespace, (namespaceCounts.get(namespace) ?? 0) + 1);
  };
  const addDescribe = (type: string, name: string, output: string) => {
    const byName = files.describe.get(type) ?? new Map<string, string>();
    // The longer of two answers for the same object: an empty one is a failed call.
    if ((byName.get(name)?.length ?? 0) < output.length) byName.set(name, output);
    files.describe.set(type, byName);
  };
  const addList = (type: string, namespace: string, wide: boolean, output: string) => {
    const key = `${type} ${namespace}${wide ? " wide" : ""}`;
    if ((files.lists.get(key)?.length ?? 0) < output.length) files.lists.set(key, output);
  };

  const states = readJson(join(directory, "raw_data", "k8s_states.json"));
  if (isRecord(states)) {
    for (const [command, raw] of Object.entries(states)) {
      const output = text(raw);
      if (output === undefined) continue;
      readKubectlCommand(command, output, { addDescribe, addList, countNamespace, events: files.eventLists });
    }
  }

  const cache = readJson(join(directory, "tool_cache.json"));
  if (isRecord(cache)) {
    for (const [call, raw] of Object.entries(cache)) {
      if (call === "collection_timestamp") {
        if (typeof raw === "string") files.collectionTimestamp = raw;
        continue;
      }
      const at = call.indexOf(":");
      const tool = at < 0 ? call : call.slice(0, at);
      const args = at < 0 ? {} : readArgs(call.slice(at + 1));
      const output = text(raw);
      if (output === undefined) continue;
      const namespace = typeof args.namespace === "string" ? args.namespace : "";
      countNamespace(namespace);
      const type = typeof args.resource_type === "string" ? resourceType(args.resource_type) : "";
      const name = typeof args.name === "string" ? args.name : "";
      if (tool === "DescribeResource" && type !== "" && name !== "") {
        addDescribe(type, name, output);
      } else if (tool === "GetResources" && type === "events") {
        files.eventLists.push({ namespace, text: output });
      } else if (tool === "GetResources" && type !== "" && name === "" && args.label_selector === undefined) {
        addList(type, namespace, args.output_wide === true, output);
      } else if (tool === "GetAppYAML" && typeof args.app_name === "string") {
        files.appYamls.set(args.app_name, output);
      } else if (tool === "GetServiceDependencies" && typeof args.service_name === "string") {
        files.dependencies.set(args.service_name, output);
      } else if (tool === "CheckNodeServiceStatus" && typeof args.node_name === "string" && typeof args.service_name === "string") {
        files.nodeServices.push({ node: args.node_name, service: args.service_name, text: output });
      } else if (tool === "GetAlerts") {
        files.alerts ??= raw;
      }
    }
  }
  files.namespaces = [...namespaceCounts.entries()].sort((a, b) => b[1] - a[1]).map(([namespace]) => namespace);

  const logs = readJson(join(directory, "raw_data", "logs.json"));
  if (isRecord(logs)) {
    files.logs = Object.fromEntries(
      Object.entries(logs).map(([service, lines]) => [
        service,
        Array.isArray(lines) ? lines.map((line) => (typeof line === "string" ? line : JSON.stringify(line))) : [],
      ]),
    );
  }
  const alerts = readJson(join(directory, "raw_data", "alert.json"));
  if (alerts !== undefined) files.alerts = alerts;
  const metrics = join(directory, "raw_data", "metrics.csv");
  if (existsSync(metrics)) files.metricsCsv = readFileSync(metrics, "utf8");
  const metadata = readJson(join(directory, "metadata.json"));
  if (isRecord(metadata) && typeof metadata.query === "string") files.query = metadata.query;
  return files;
}

function readArgs(json: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(json);
    return isRecord(parsed) ? parsed : {};
  } catch {
    return {};
  }
}

interface CommandSinks {
  addDescribe(type: string, name: string, output: string): void;
  addList(type: string, namespace: string, wide: boolean, output: string): void;
  countNamespace(namespace: string | undefined): void;
  events: Array<{ namespace: string; text: string }>;
}

/**
 * Files one kubectl command's output: `kubectl describe <type> <name> -n <ns>`, `kubectl get <type>
 * -n <ns> [-o wide]`, `kubectl get events -n <ns> … | tail`. A `get` of one object, with a label
 * selector or with `--show-labels` adds nothing the others do not.
 */
function readKubectlCommand(command: string, output: string, sinks: CommandSinks): void {
  const words = command.split("|")[0]?.trim().split(/\s+/) ?? [];
  if (words[0] !== "kubectl") return;
  const verb = words[1];
  const type = resourceType(words[2] ?? "");
  const namespaceAt = words.indexOf("-n");
  const namespace = namespaceAt < 0 ? "" : (words[namespaceAt + 1] ?? "");
  sinks.countNamespace(namespace);
  const name = words[3] !== undefined && !words[3].startsWith("-") ? words[3] : undefined;
  if (verb === "describe" && name !== undefined) {
    sinks.addDescribe(type, name, output);
  } else if (verb === "get" && type === "events") {
    sinks.events.push({ namespace, text: output });
  } else if (verb === "get" && name === undefined && !words.includes("-l") && !words.includes("--show-labels")) {
    const outputAt = words.indexOf("-o");
    sinks.addList(type, namespace, outputAt >= 0 && words[outputAt + 1] === "wide", output);
  }
}
