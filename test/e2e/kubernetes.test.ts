/**
 * deploy/kubernetes: every kustomization builds, every resource is valid against the Kubernetes API's
 * schemas (and KEDA's for the ScaledObject), and what the manifests promise holds: probes on the routes
 * the processes serve, a grace period that covers the drain, non-root read-only containers, disruption
 * budgets and an autoscaler that select the right pods, settings and CONFIG_DIR that the API and the
 * workers accept as the kubelet would hand them over, and read-only access to the cluster for the
 * workers alone, on exactly what the kubernetes connector reads. There is no cluster here: the check builds the
 * kustomizations itself (test/support/kustomize.ts), and compares with `kubectl kustomize` where kubectl
 * is installed.
 */
import { spawnSync } from "node:child_process";
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { ApiEnvSchema, parseEnv } from "@pes/api/dist/env.js";
import { loadConfig, resolveCatalogSecrets } from "@pes/config";
import { parseWorkerEnv, WorkerEnvSchema } from "@pes/worker/dist/env.js";
import { parseAllDocuments } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KustomizeError, kustomizeBuild, type Resource } from "../support/kustomize.js";
import { schemaProblems } from "../support/kubernetes-schemas.js";
import { repoRoot } from "../support/processes.js";

const KUBERNETES = join(repoRoot, "deploy/kubernetes");
const EXAMPLE = join(KUBERNETES, "overlays/example");

interface Probe {
  httpGet?: { path: string; port: string | number };
}
interface Container {
  name: string;
  image: string;
  command?: string[];
  ports?: { name?: string; containerPort: number }[];
  env?: { name: string; value?: string }[];
  envFrom?: { configMapRef?: { name: string; optional?: boolean }; secretRef?: { name: string; optional?: boolean } }[];
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
  securityContext?: { allowPrivilegeEscalation?: boolean; readOnlyRootFilesystem?: boolean; capabilities?: { drop?: string[] } };
  volumeMounts?: { name: string; mountPath: string }[];
}
interface PodSpec {
  terminationGracePeriodSeconds?: number;
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
  containers: Container[];
  volumes?: { name: string; configMap?: { name: string }; secret?: { secretName: string; items?: { key: string; path: string }[] } }[];
}
interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}
interface RoleBinding extends Resource {
  roleRef: { apiGroup: string; kind: string; name: string };
  subjects: { kind: string; name: string; namespace?: string }[];
}
interface Workload extends Resource {
  spec: { replicas?: number; selector: { matchLabels: Record<string, string> }; template: { metadata: { labels: Record<string, string> }; spec: PodSpec } };
}

function find<T extends Resource = Resource>(resources: Resource[], kind: string, name: string): T {
  const found = resources.find((resource) => resource.kind === kind && resource.metadata.name === name);
  if (found === undefined) throw new Error(`no ${kind} ${name} in the build`);
  return found as T;
}

const onlyContainer = (workload: Workload): Container => {
  const [container] = workload.spec.template.spec.containers;
  if (container === undefined) throw new Error(`${workload.metadata.name} has no container`);
  return container;
};

const envValue = (container: Container, name: string): number => Number(container.env?.find((entry) => entry.name === name)?.value);

/** A kustomization in a temp dir whose resources and components are paths into deploy/kubernetes. */
async function kustomization(dir: string, body: Record<string, unknown>): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, "kustomization.yaml"), JSON.stringify({ apiVersion: "kustomize.config.k8s.io/v1beta1", kind: "Kustomization", ...body }));
}

let scratch: string;
let example: Resource[];
let withHpa: Resource[];
let base: Resource[];

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "pes-kustomize-"));
  // The example with the plain HPA in place of KEDA: a copy whose component is swapped.
  const hpaOverlay = join(scratch, "hpa");
  await cp(EXAMPLE, hpaOverlay, { recursive: true });
  const file = join(hpaOverlay, "kustomization.yaml");
  await writeFile(
    file,
    (await readFile(file, "utf8"))
      .replace("../../base", relative(hpaOverlay, join(KUBERNETES, "base")))
      .replace("../../components/keda", relative(hpaOverlay, join(KUBERNETES, "components/hpa"))),
  );
  withHpa = await kustomizeBuild(hpaOverlay);
  base = await kustomizeBuild(join(KUBERNETES, "base"));
  example = await kustomizeBuild(EXAMPLE);
});

afterAll(async () => {
  if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
});

describe("deploy/kubernetes builds, and every resource is valid against its schema", () => {
  it("the base, the example overlay (KEDA) and the example with the plain HPA", () => {
    for (const [name, resources] of Object.entries({ base, example, withHpa })) {
      expect(resources.length, name).toBeGreaterThan(0);
      for (const resource of resources) expect(schemaProblems(resource), `${name}: ${resource.kind} ${resource.metadata.name}`).toEqual([]);
    }
    expect(example.map((resource) => resource.kind)).toContain("ScaledObject");
    expect(withHpa.map((resource) => resource.kind)).toContain("HorizontalPodAutoscaler");
    expect(withHpa.map((resource) => resource.kind)).not.toContain("ScaledObject");
    // Everything in the overlay's namespace, but the cluster's roles and their bindings.
    const clusterScoped = new Set(["ClusterRole", "ClusterRoleBinding"]);
    for (const resource of example)
      expect(resource.metadata.namespace, `${resource.kind} ${resource.metadata.name}`).toBe(clusterScoped.has(resource.kind) ? undefined : "pes");
    expect(example.filter((resource) => clusterScoped.has(resource.kind))).toHaveLength(4);
    const image = onlyContainer(find<Workload>(example, "Deployment", "pes-api")).image;
    expect(image).toBe("registry.example.com/playbook-execution-service:0.1.0");
    expect(onlyContainer(find<Workload>(example, "Deployment", "pes-worker")).image).toBe(image);
  });

  it("refuses a resource the API server would refuse: a wrong type, a missing field, a kind it has no schema for", () => {
    const api = structuredClone(find<Workload>(base, "Deployment", "pes-api"));
    (api.spec as { replicas: unknown }).replicas = "two";
    expect(schemaProblems(api)).toEqual(["data/spec/replicas must be integer"]);

    const container = structuredClone(find<Workload>(base, "Deployment", "pes-worker"));
    delete (onlyContainer(container) as Partial<Container>).name;
    expect(schemaProblems(container).join()).toMatch(/containers\/0 must have required property name/);

    const scaledObject = structuredClone(find(example, "ScaledObject", "pes-worker"));
    delete (scaledObject.spec as { scaleTargetRef?: unknown }).scaleTargetRef;
    expect(schemaProblems(scaledObject).join()).toMatch(/spec must have required property '?scaleTargetRef'?/);

    expect(schemaProblems({ apiVersion: "batch/v1", kind: "CronJob", metadata: { name: "x" } })).toEqual([
      "no schema for batch/v1 CronJob: add its model to test/support/kubernetes-schemas.ts",
    ]);
  });

  it("refuses a kustomization kustomize would refuse, or one it cannot build", async () => {
    const baseFrom = (dir: string) => relative(dir, join(KUBERNETES, "base"));

    const missing = join(scratch, "missing");
    await kustomization(missing, { resources: [baseFrom(missing), "not-there.yaml"] });
    await expect(kustomizeBuild(missing)).rejects.toThrow(/resource not-there.yaml does not exist/);

    const badPatch = join(scratch, "bad-patch");
    await kustomization(badPatch, {
      resources: [baseFrom(badPatch)],
      patches: [{ target: { kind: "Deployment", name: "pes-api" }, patch: JSON.stringify([{ op: "replace", path: "/spec/template/spec/nope/0", value: 1 }]) }],
    });
    await expect(kustomizeBuild(badPatch)).rejects.toThrow(/does not apply to Deployment pes-api/);

    const unsupported = join(scratch, "unsupported");
    await kustomization(unsupported, { resources: [baseFrom(unsupported)], replicas: [{ name: "pes-api", count: 3 }] });
    await expect(kustomizeBuild(unsupported)).rejects.toThrow(KustomizeError);
    await expect(kustomizeBuild(unsupported)).rejects.toThrow(/"replicas" is not a field this check builds/);
  });

  const kubectl = spawnSync("kubectl", ["version", "--client"], { encoding: "utf8" }).status === 0;
  it.skipIf(!kubectl)("builds what `kubectl kustomize` builds (where kubectl is installed)", () => {
    const built = spawnSync("kubectl", ["kustomize", EXAMPLE], { encoding: "utf8" });
    expect(built.status, built.stderr).toBe(0);
    // kustomize suffixes generated names with a hash of their content, and rewrites the references to them.
    const generated = new Set(
      example.filter((resource) => resource.kind === "ConfigMap" || resource.kind === "Secret").map((resource) => resource.metadata.name),
    );
    const unhashed = built.stdout.replace(/\b([a-z0-9-]+)-[a-z0-9]{10}\b/g, (whole, name: string) => (generated.has(name) ? name : whole));
    const theirs = parseAllDocuments(unhashed).map((document) => document.toJS() as Resource);
    const key = (resource: Resource) => `${resource.kind} ${resource.metadata.name}`;
    const sorted = (resources: Resource[]) => [...resources].sort((a, b) => key(a).localeCompare(key(b)));
    expect(sorted(example)).toEqual(sorted(theirs));
  });
});

describe("what the workers may read of the cluster", () => {
  // What the kubernetes connector reads (packages/connectors/src/kubernetes/state-lists.ts, and the events,
  // pods and rollouts actions): get and list, and pods' logs, nothing else.
  const READS: PolicyRule[] = [
    {
      apiGroups: [""],
      resources: ["pods", "events", "services", "resourcequotas", "persistentvolumeclaims", "serviceaccounts", "nodes", "persistentvolumes"],
      verbs: ["get", "list"],
    },
    { apiGroups: [""], resources: ["pods/log"], verbs: ["get"] },
    { apiGroups: ["apps"], resources: ["deployments", "replicasets", "statefulsets"], verbs: ["get", "list"] },
    { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["get", "list"] },
    { apiGroups: ["storage.k8s.io"], resources: ["storageclasses"], verbs: ["get", "list"] },
  ];
  const rulesOf = (name: string) => (find(example, "ClusterRole", name) as Resource & { rules: PolicyRule[] }).rules;

  it("grants get and list on exactly the kinds the connector reads, pods' logs, and ConfigMaps' names apart", () => {
    expect(rulesOf("pes-cluster-reader")).toEqual(READS);
    // ConfigMaps: list only, in a role of their own that an operator can leave out.
    expect(rulesOf("pes-cluster-configmap-names-reader")).toEqual([{ apiGroups: [""], resources: ["configmaps"], verbs: ["list"] }]);
    for (const role of example.filter((resource) => resource.kind === "ClusterRole")) {
      for (const rule of (role as Resource & { rules: PolicyRule[] }).rules) {
        for (const verb of rule.verbs) expect(["get", "list"], `${role.metadata.name}: ${verb}`).toContain(verb);
        expect(rule.resources.join(), role.metadata.name).not.toContain("*");
        // RBAC cannot grant Secrets' names without their values: the connector's list of them is refused.
        expect(rule.resources, role.metadata.name).not.toContain("secrets");
      }
    }
  });

  it("binds both roles to the workers' ServiceAccount, whose token only the workers mount", () => {
    const serviceAccount = find(example, "ServiceAccount", "pes");
    for (const name of ["pes-cluster-reader", "pes-cluster-configmap-names-reader"]) {
      const binding = find<RoleBinding>(example, "ClusterRoleBinding", name);
      expect(binding.roleRef).toEqual({ apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name });
      expect(binding.subjects).toEqual([{ kind: "ServiceAccount", name: "pes", namespace: serviceAccount.metadata.namespace }]);
    }
    const token = find(example, "Secret", "pes-kubernetes-token") as Resource & { type: string; metadata: { annotations?: Record<string, string> } };
    expect(token.type).toBe("kubernetes.io/service-account-token");
    expect(token.metadata.annotations?.["kubernetes.io/service-account.name"]).toBe("pes");
    const mountsToken = (name: string) =>
      find<Workload>(example, "Deployment", name).spec.template.spec.volumes?.some((volume) => volume.secret?.secretName === "pes-kubernetes-token");
    expect(mountsToken("pes-worker")).toBe(true);
    expect(mountsToken("pes-api")).toBe(false);
    for (const name of ["pes-api", "pes-worker"])
      expect((find<Workload>(example, "Deployment", name).spec.template.spec as { automountServiceAccountToken?: boolean }).automountServiceAccountToken).toBe(
        false,
      );
  });
});

describe("what the manifests promise", () => {
  it("probes /readyz and /healthz where each process serves them, and gives the SIGTERM drain its time", () => {
    const api = find<Workload>(example, "Deployment", "pes-api");
    const worker = find<Workload>(example, "Deployment", "pes-worker");
    for (const [workload, port, portNumber] of [
      [api, "http", envValue(onlyContainer(api), "PORT")],
      [worker, "metrics", envValue(onlyContainer(worker), "WORKER_HTTP_PORT")],
    ] as const) {
      const container = onlyContainer(workload);
      expect(container.ports).toEqual([{ name: port, containerPort: portNumber }]);
      expect(container.readinessProbe?.httpGet).toEqual({ path: "/readyz", port });
      expect(container.livenessProbe?.httpGet).toEqual({ path: "/healthz", port });
      expect(container.startupProbe?.httpGet).toEqual({ path: "/healthz", port });
    }
    expect(onlyContainer(api).command).toEqual(["node", "apps/api/dist/main.js"]);
    expect(onlyContainer(worker).command).toEqual(["node", "apps/worker/dist/main.js"]);

    // The drain (API only), then in-flight work, then closing connections and exporting spans (15 s).
    const apiNeeds = envValue(onlyContainer(api), "SHUTDOWN_DRAIN_MS") + envValue(onlyContainer(api), "SHUTDOWN_TIMEOUT_MS") + 15_000;
    const workerNeeds = envValue(onlyContainer(worker), "SHUTDOWN_TIMEOUT_MS") + 15_000;
    expect(apiNeeds).toBeGreaterThan(15_000);
    expect(workerNeeds).toBeGreaterThan(15_000);
    expect((api.spec.template.spec.terminationGracePeriodSeconds ?? 30) * 1_000).toBeGreaterThanOrEqual(apiNeeds);
    expect((worker.spec.template.spec.terminationGracePeriodSeconds ?? 30) * 1_000).toBeGreaterThanOrEqual(workerNeeds);
  });

  it("runs every container as a non-root user on a read-only root file system, with no privilege to gain", () => {
    for (const name of ["pes-api", "pes-worker"]) {
      const pod = find<Workload>(example, "Deployment", name).spec.template.spec;
      expect(pod.securityContext?.runAsNonRoot).toBe(true);
      expect(pod.securityContext?.runAsUser).toBeGreaterThan(0);
      for (const container of pod.containers) {
        expect(container.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } });
      }
    }
  });

  it("keeps pods serving through a node drain, routes to the right pods, and scales the workers on the queue's depth", () => {
    for (const name of ["pes-api", "pes-worker"]) {
      const workload = find<Workload>(example, "Deployment", name);
      const labels = workload.spec.template.metadata.labels;
      expect(labels).toMatchObject(workload.spec.selector.matchLabels);
      const budget = find(example, "PodDisruptionBudget", name).spec as { maxUnavailable: number; selector: { matchLabels: Record<string, string> } };
      expect(budget.maxUnavailable).toBe(1);
      expect(labels).toMatchObject(budget.selector.matchLabels);
      const service = find(example, "Service", name).spec as { selector: Record<string, string>; ports: { targetPort: string }[] };
      expect(labels).toMatchObject(service.selector);
      const portNames = onlyContainer(workload).ports?.map((port) => port.name);
      for (const port of service.ports) expect(portNames).toContain(port.targetPort);
    }
    // The other component's API has no worker Deployment of the same labels: the selectors differ.
    expect(find<Workload>(example, "Deployment", "pes-api").spec.selector.matchLabels).not.toEqual(
      find<Workload>(example, "Deployment", "pes-worker").spec.selector.matchLabels,
    );

    // An autoscaler owns the workers' count: the Deployment leaves it unset, or each apply would reset it.
    for (const resources of [example, withHpa]) expect(find<Workload>(resources, "Deployment", "pes-worker").spec.replicas).toBeUndefined();
    expect(find<Workload>(base, "Deployment", "pes-worker").spec.replicas).toBe(2);

    const scaledObject = find(example, "ScaledObject", "pes-worker").spec as {
      scaleTargetRef: { name: string };
      minReplicaCount: number;
      triggers: { type: string; metadata: { query: string; threshold: string } }[];
    };
    expect(scaledObject.scaleTargetRef.name).toBe("pes-worker");
    expect(scaledObject.minReplicaCount).toBeGreaterThanOrEqual(1);
    const [trigger] = scaledObject.triggers;
    expect(trigger?.type).toBe("prometheus");
    expect(trigger?.metadata.query).toMatch(/pes_queue_jobs\{state=~"waiting\|prioritized\|active"\}/);
    const hpa = find(withHpa, "HorizontalPodAutoscaler", "pes-worker").spec as {
      scaleTargetRef: { kind: string; name: string };
      metrics: { type: string; external: { metric: { name: string }; target: { averageValue: string } } }[];
    };
    expect(hpa.scaleTargetRef).toMatchObject({ kind: "Deployment", name: "pes-worker" });
    expect(hpa.metrics[0]?.external.metric.name).toBe("pes_queue_jobs_in_flight");
    // Both read the same figure per worker, below a worker's default concurrency (50).
    expect(Number(trigger?.metadata.threshold)).toBe(Number(hpa.metrics[0]?.external.target.averageValue));
    expect(Number(trigger?.metadata.threshold)).toBeLessThan(50);
  });

  it("hands the API and the workers settings and a CONFIG_DIR they accept, as the kubelet would", async () => {
    // The Secret an operator creates from worker-secrets.env.example (the example's references).
    const workerSecrets = Object.fromEntries(
      (await readFile(join(EXAMPLE, "worker-secrets.env.example"), "utf8"))
        .split("\n")
        .filter((line) => /^[A-Z]/.test(line))
        .map((line) => line.split("=", 2) as [string, string]),
    );
    const secrets: Record<string, Record<string, string>> = { "pes-worker-secrets": workerSecrets };

    const known = {
      api: new Set([...Object.keys(ApiEnvSchema.shape), "DEV_ISSUER_DIR"]),
      worker: new Set([...Object.keys(WorkerEnvSchema.shape), ...Object.keys(workerSecrets)]),
    };
    for (const [process, name] of [
      ["api", "pes-api"],
      ["worker", "pes-worker"],
    ] as const) {
      const workload = find<Workload>(example, "Deployment", name);
      const container = onlyContainer(workload);
      const env: Record<string, string> = {};
      for (const source of container.envFrom ?? []) {
        const ref = source.configMapRef ?? source.secretRef;
        if (ref === undefined) continue;
        const data = source.configMapRef !== undefined ? (find(example, "ConfigMap", ref.name).data as Record<string, string>) : secrets[ref.name];
        if (data === undefined) {
          expect(ref.optional, `${name}: ${ref.name} is neither built nor optional`).toBe(true);
          continue;
        }
        for (const key of Object.keys(data)) {
          if (!key.startsWith("OTEL_")) expect(known[process].has(key), `${name}: ${key} (from ${ref.name}) is not a setting of the ${process}`).toBe(true);
        }
        Object.assign(env, data);
      }
      for (const entry of container.env ?? []) if (entry.value !== undefined) env[entry.name] = entry.value;

      // CONFIG_DIR as the mounts lay it out: each ConfigMap's keys as files at its mount path.
      const configDir = join(scratch, `config-${process}`);
      expect(env.CONFIG_DIR).toBe("/config");
      const volumes = new Map(workload.spec.template.spec.volumes?.map((volume) => [volume.name, volume]));
      for (const mount of container.volumeMounts ?? []) {
        if (!mount.mountPath.startsWith("/config/")) continue;
        const configMap = volumes.get(mount.name)?.configMap;
        expect(configMap, `${name}: ${mount.mountPath} is not a ConfigMap`).toBeDefined();
        for (const [file, text] of Object.entries(find(example, "ConfigMap", configMap?.name ?? "").data as Record<string, string>)) {
          const path = join(configDir, mount.mountPath.slice("/config/".length), file);
          await mkdir(dirname(path), { recursive: true });
          await writeFile(path, text);
        }
      }
      const catalog = await loadConfig(configDir);
      expect([...catalog.organizations.keys()]).toEqual(["acme"]);
      expect([...(catalog.organizations.get("acme")?.playbooks.keys() ?? [])]).toEqual(["node-cpu"]);

      // The files of mounted Secrets, as the kubelet lays them out: a service account token's Secret holds
      // what the token controller writes into it (token, ca.crt), any other the keys the overlay builds.
      const files = new Map<string, string>();
      for (const mount of container.volumeMounts ?? []) {
        const secret = volumes.get(mount.name)?.secret;
        if (secret === undefined) continue;
        const built = example.find((resource) => resource.kind === "Secret" && resource.metadata.name === secret.secretName) as
          | (Resource & { type?: string; data?: Record<string, string> })
          | undefined;
        const keys = built?.type === "kubernetes.io/service-account-token" ? ["token", "ca.crt", "namespace"] : Object.keys(built?.data ?? {});
        for (const key of keys) {
          const path = secret.items === undefined ? key : secret.items.find((item) => item.key === key)?.path;
          if (path !== undefined) files.set(join(mount.mountPath, path), `${key} of ${secret.secretName}`);
        }
      }
      const readFile = (path: string) => {
        const text = files.get(path);
        if (text === undefined) throw new Error(`${path} is not mounted`);
        return text;
      };

      const processEnv = { ...env, CONFIG_DIR: configDir };
      if (process === "api") {
        expect(parseEnv(processEnv).auth.jwksUrl).toBe("https://idp.example.com/.well-known/jwks.json");
        // The API never reads the cluster: it gets no token.
        expect([...files.keys()]).toEqual([]);
      } else {
        expect(parseWorkerEnv(processEnv).slackPostIntervalMs).toBe(1_000);
        // Every secret the organization files reference reaches the workers: variables and files.
        expect(resolveCatalogSecrets(catalog, { env: processEnv, readFile }).missing).toEqual([]);
        expect([...files.keys()].sort()).toEqual(["/run/secrets/kubernetes/ca.crt", "/run/secrets/kubernetes/token"]);
      }
    }
  });
});
