import type { FakeDocument, PostableAlert, SyntheticSeries } from "@pes/local-services";
import type { KubernetesObject, LogStream, ScenarioData } from "./scenario.js";
import {
  type Clock,
  constant,
  counter,
  gauge,
  hashUnit,
  hexId,
  jittered,
  latencyHistogram,
  linesAt,
  podSuffix,
  sampleTimes,
  type Shape,
  type TimedLine,
} from "./synthetic.js";

/**
 * The `shop`: an online shop on one Kubernetes cluster (namespace `shop`, nodes node-1..3), with its
 * Prometheus, Alertmanager, Loki (application logs), Elasticsearch (Envoy sidecar access logs) and API
 * server. Every scenario starts from this world running normally, with the noise a real one has, and
 * changes what its incident changes:
 *
 * - every service logs info lines and a steady trickle of its usual errors; Postgres logs checkpoints and
 *   duplicate-key errors; Envoy logs requests and an occasional upstream connection failure;
 * - three alerts fire all along: Watchdog (always), DiskSpaceLow on node-3 (for hours), a crash-looping
 *   report generator; a certificate warning for cart;
 * - cart was rolled out 35 minutes before the issue; report-generator crash-loops (warning events,
 *   restarts) the whole time;
 * - other services, nodes, dependencies and databases have their own series beside the ones asked about;
 * - Tempo counts the calls between services (its service graph), the storefront's among them where the
 *   world has one.
 */

export const SERVICES = ["checkout", "cart", "catalog", "orders", "search", "recommendations"] as const;
/**
 * The storefront: it renders the shop's pages, calling catalog, cart, search and recommendations for each.
 * Only in a world built `withStorefront`: the other scenarios' data stays as their bundles recorded it.
 */
const STOREFRONT = "storefront";
export type ServiceName = (typeof SERVICES)[number] | typeof STOREFRONT;
export const NODES = ["node-1", "node-2", "node-3"] as const;
export type NodeName = (typeof NODES)[number];
/** One node per availability zone. */
const ZONES: Record<NodeName, string> = { "node-1": "eu-west-1a", "node-2": "eu-west-1b", "node-3": "eu-west-1c" };
export const DEPENDENCIES = [
  { dependency: "payments-provider", consumer: "checkout", host: "api.payments.example" },
  { dependency: "fraud-check", consumer: "checkout", host: "fraud-check.shop.svc" },
  { dependency: "shipping-api", consumer: "orders", host: "api.shipping.example" },
] as const;
export type DependencyName = (typeof DEPENDENCIES)[number]["dependency"];
export const DATABASES = [
  { db: "orders-db", connections: 38, maxConnections: 100 },
  { db: "users-db", connections: 22, maxConnections: 200 },
] as const;
export type DatabaseName = (typeof DATABASES)[number]["db"];

export const NAMESPACE = "shop";
const NODE_MEMORY_BYTES = 16 * 1024 ** 3;
const REGISTRY = "registry.shop.example";

/** How a service's traffic behaves over time. */
export interface Traffic {
  requestsPerSecond: Shape;
  /** Share of requests answered 5xx. */
  errorShare: Shape;
  /** Mean latency in seconds (p99 ≈ 4.6×). */
  meanLatency: Shape;
}

const NORMAL_TRAFFIC: Record<ServiceName, Traffic> = {
  checkout: { requestsPerSecond: constant(40), errorShare: constant(0.004), meanLatency: constant(0.06) },
  cart: { requestsPerSecond: constant(90), errorShare: constant(0.002), meanLatency: constant(0.02) },
  catalog: { requestsPerSecond: constant(160), errorShare: constant(0.003), meanLatency: constant(0.035) },
  orders: { requestsPerSecond: constant(25), errorShare: constant(0.003), meanLatency: constant(0.05) },
  search: { requestsPerSecond: constant(120), errorShare: constant(0.006), meanLatency: constant(0.08) },
  recommendations: { requestsPerSecond: constant(60), errorShare: constant(0.002), meanLatency: constant(0.04) },
  storefront: { requestsPerSecond: constant(50), errorShare: constant(0.003), meanLatency: constant(0.011) },
};

/**
 * Who calls whom, as Tempo's service-graph processor counts the calls (`traces_service_graph_request_total`),
 * each call a share of its server's requests. Pages and the checkout form come from browsers: Tempo
 * names that caller `user`, a virtual node.
 */
const CALLS: ReadonlyArray<{ client: ServiceName | "user"; server: ServiceName; share: number }> = [
  { client: "user", server: "storefront", share: 1 },
  { client: "user", server: "checkout", share: 1 },
  { client: "storefront", server: "catalog", share: 0.6 },
  { client: "storefront", server: "cart", share: 0.7 },
  { client: "storefront", server: "search", share: 1 },
  { client: "storefront", server: "recommendations", share: 1 },
  { client: "checkout", server: "cart", share: 0.3 },
  { client: "checkout", server: "catalog", share: 0.15 },
  { client: "checkout", server: "orders", share: 1 },
  { client: "recommendations", server: "catalog", share: 0.25 },
];

/** One Deployment revision: a ReplicaSet with an image, created some minutes relative to the issue. */
export interface Revision {
  revision: number;
  version: string;
  /** Minutes relative to the issue time (negative: before). */
  atMinutes: number;
}

/** Each service's revisions, oldest first: the last one is what runs now. */
const NORMAL_REVISIONS: Record<ServiceName, Revision[]> = {
  checkout: [
    { revision: 11, version: "v1.40", atMinutes: -9 * 1440 },
    { revision: 12, version: "v1.41", atMinutes: -3 * 1440 },
  ],
  // Noise: another service's rollout inside the baseline.
  cart: [
    { revision: 30, version: "v3.11", atMinutes: -2 * 1440 },
    { revision: 31, version: "v3.12", atMinutes: -35 },
  ],
  catalog: [{ revision: 7, version: "v2.7", atMinutes: -6 * 1440 }],
  orders: [{ revision: 19, version: "v5.3", atMinutes: -4 * 1440 }],
  search: [{ revision: 44, version: "v3.0", atMinutes: -5 * 1440 }],
  recommendations: [{ revision: 8, version: "v0.9", atMinutes: -12 * 1440 }],
  storefront: [{ revision: 23, version: "v4.2", atMinutes: -8 * 1440 }],
};

/** Every container's memory limit, and the share of it each service's pods use in normal times. */
const MEMORY_LIMIT_BYTES = 1024 ** 3;
const USUAL_MEMORY_SHARE: Record<ServiceName, number> = {
  checkout: 0.52,
  cart: 0.31,
  catalog: 0.44,
  orders: 0.37,
  search: 0.39,
  recommendations: 0.58,
  storefront: 0.34,
};

const REPLICAS: Record<ServiceName, number> = { checkout: 3, cart: 3, catalog: 4, orders: 2, search: 3, recommendations: 2, storefront: 2 };

/** Every container's CPU limit, in cores: far above its usual use (a tenth to a fifth of it); throttled at it. */
const CPU_LIMIT_CORES = 1;

/** A service's usual error, logged at a steady rate whatever happens: the baseline a log analysis must see. */
const USUAL_ERRORS: Record<ServiceName, { perMinute: number; render: (n: number) => string }> = {
  checkout: { perMinute: 1, render: (n) => `level=error msg="inventory reservation timed out" order_id=ord-${48_000 + n} after=2.0s` },
  cart: { perMinute: 0.5, render: (n) => `level=error msg="redis GET timeout" key=cart:${hexId("cart-key", n, 12)} timeout=250ms` },
  catalog: { perMinute: 0.4, render: (n) => `level=error msg="image resize failed" sku=SKU-${10_000 + n} err="unsupported format"` },
  orders: { perMinute: 0.5, render: (n) => `level=error msg="webhook delivery failed" order_id=ord-${91_000 + n} status=502 attempt=1` },
  search: { perMinute: 2, render: (n) => `level=error msg="query parse error" q="${["shoes", "red dress", "usb-c"][n % 3] ?? ""}" pos=${n % 9}` },
  recommendations: { perMinute: 0.3, render: (n) => `level=error msg="feature store miss" user_id=u-${7000 + n}` },
  storefront: { perMinute: 0.6, render: (n) => `level=error msg="session cookie rejected" reason="signature mismatch" session=${hexId("session", n, 16)}` },
};

export interface ShopChanges {
  /** Each service's traffic, where the incident changes it (the rest stays normal). */
  traffic?: Partial<Record<ServiceName, Partial<Traffic>>>;
  /** Revisions rolled out around the issue, per service, after the normal history. */
  rollouts?: Partial<Record<ServiceName, Revision[]>>;
  /** Share of each node's memory in use. */
  nodeMemoryUsed?: Partial<Record<NodeName, Shape>>;
  /** Each node's share of CPU time waiting for I/O. */
  nodeIowait?: Partial<Record<NodeName, Shape>>;
  /** How many times slower the pods on each node answer (default 1). */
  nodeLatency?: Partial<Record<NodeName, Shape>>;
  /** Each node's major page faults per second. */
  nodeMajorFaults?: Partial<Record<NodeName, Shape>>;
  /** Each dependency's probe result (1 up, 0 down). */
  probes?: Partial<Record<DependencyName, Shape>>;
  /** Share of calls to each dependency that fail. */
  dependencyErrorShare?: Partial<Record<DependencyName, Shape>>;
  /** Connections open on each database. */
  dbConnections?: Partial<Record<DatabaseName, Shape>>;
  /** The node each service's pods run on (default: spread over the nodes). */
  placement?: Partial<Record<ServiceName, NodeName>>;
  /** Each pod's memory in use as a share of its limit, by service (the rest hold steady). */
  podMemory?: Partial<Record<ServiceName, (pod: PodInfo, seconds: number) => number>>;
  /** How many minutes of metrics before the issue (default 90): a slow incident needs a longer history. */
  historyMinutes?: number;
  /** Whether the shop runs its storefront (STOREFRONT), with its pods, series, logs and calls. */
  withStorefront?: boolean;
  /** The latency histograms' bucket bounds in seconds (default LATENCY_BUCKETS): a service answering in half a millisecond needs finer ones. */
  latencyBuckets?: readonly number[];
}

/** A pod of the world, for scenarios that change pods' status or add logs from them. */
export interface PodInfo {
  name: string;
  service: ServiceName;
  node: NodeName;
  revision: Revision;
  /** Unix seconds: when it started and when it was replaced (undefined: still running). */
  from: number;
  until?: number;
}

export interface ShopWorld {
  clock: Clock;
  data: ScenarioData;
  /** Every pod that ran in the data's time range, old ones included. */
  pods: PodInfo[];
  /** Lines for a service's Loki streams (one stream per pod that was running then). */
  addServiceLogs(service: ServiceName, lines: readonly TimedLine[]): void;
  /** Lines for a Postgres database's Loki stream. */
  addDatabaseLogs(db: DatabaseName, lines: readonly TimedLine[]): void;
  addAlert(alert: { name: string; labels: Record<string, string>; severity: string; startsAtMinutes: number; summary: string }): void;
  /** A core/v1 Event. */
  addEvent(event: {
    namespace: string;
    kind: string;
    name: string;
    reason: string;
    message: string;
    warning: boolean;
    firstMinutes: number;
    lastMinutes?: number;
    count?: number;
    component?: string;
    host?: string;
  }): void;
  /** Changes a current pod's container status (a restart, an OOM kill). */
  setPodStatus(
    podName: string,
    status: { restartCount: number; lastTermination?: { reason: string; exitCode: number; atMinutes: number }; waiting?: string },
  ): void;
}

/**
 * Builds the shop's data from `clock.issueAt - 90 min` (metrics, or `historyMinutes`; logs and documents from -65 min) to
 * 15 minutes after the issue time (the end of the playbooks' windows), with `changes` applied.
 */
export function shopWorld(clock: Clock, changes: ShopChanges = {}): ShopWorld {
  const dataStart = clock.seconds(-(changes.historyMinutes ?? 90));
  const dataEnd = clock.seconds(15);
  const times = sampleTimes(dataStart, dataEnd);
  const logsFrom = clock.at(-65);
  const logsTo = clock.at(15);
  const series: SyntheticSeries[] = [];
  const logStreams = new Map<string, LogStream>();
  const documents: FakeDocument[] = [];
  const alerts: PostableAlert[] = [];
  const kubernetes: ScenarioData["kubernetes"] = { deployments: [], replicaSets: [], pods: [], events: [] };
  const services: readonly ServiceName[] = changes.withStorefront === true ? [...SERVICES, STOREFRONT] : SERVICES;

  // Pods: every revision's pods run from its rollout (a minute to become ready) until the next one.
  const pods: PodInfo[] = [];
  for (const [index, service] of services.entries()) {
    const revisions = [...NORMAL_REVISIONS[service], ...(changes.rollouts?.[service] ?? [])];
    for (const [r, revision] of revisions.entries()) {
      const next = revisions[r + 1];
      for (let replica = 0; replica < REPLICAS[service]; replica++) {
        const node = changes.placement?.[service] ?? NODES[(index + replica) % NODES.length] ?? "node-1";
        pods.push({
          name: `${service}-${replicaSetHash(service, revision)}-${podSuffix(`${service}-${revision.revision}`, replica)}`,
          service,
          node,
          revision,
          from: clock.seconds(revision.atMinutes) + 20 * replica,
          ...(next === undefined ? {} : { until: clock.seconds(next.atMinutes) + 60 + 20 * replica }),
        });
      }
    }
    kubernetes.deployments.push(deployment(service, revisions, clock));
    for (const revision of revisions) kubernetes.replicaSets.push(replicaSet(service, revision, revisions, clock));
  }
  for (const pod of pods.filter((candidate) => candidate.until === undefined)) kubernetes.pods.push(podObject(pod));

  const podsAt = (service: ServiceName, at: number) => pods.filter((pod) => pod.service === service && pod.from <= at && (pod.until ?? Infinity) > at);

  // Metrics: traffic, latency and CPU per service (CPU per pod, so rollouts churn series).
  const requestRates = new Map<ServiceName, Shape>();
  for (const service of services) {
    const traffic = { ...NORMAL_TRAFFIC[service], ...changes.traffic?.[service] };
    const rps = jittered(traffic.requestsPerSecond, `${service}-rps`, 0.04);
    requestRates.set(service, rps);
    const errors: Shape = (t) => rps(t) * traffic.errorShare(t) * (1 + 0.1 * (2 * hashUnit(`${service}-err`, t) - 1));
    series.push(counter("http_requests_total", { namespace: NAMESPACE, service, code: "200" }, times, (t) => rps(t) - errors(t)));
    series.push(counter("http_requests_total", { namespace: NAMESPACE, service, code: "500" }, times, errors));
    // One histogram per node the service's pods run on, each with the share of the requests its pods take.
    for (const node of NODES.filter((candidate) => pods.some((pod) => pod.service === service && pod.node === candidate))) {
      const share = (t: number) => {
        const running = podsAt(service, t);
        return running.length === 0 ? 0 : running.filter((pod) => pod.node === node).length / running.length;
      };
      const slower = changes.nodeLatency?.[node] ?? constant(1);
      series.push(
        ...latencyHistogram(
          "http_request_duration_seconds",
          { namespace: NAMESPACE, service, node, zone: ZONES[node] },
          times,
          (t) => rps(t) * share(t),
          (t) => traffic.meanLatency(t) * slower(t),
          changes.latencyBuckets,
        ),
      );
    }
    for (const pod of pods.filter((candidate) => candidate.service === service && (candidate.until ?? Infinity) > dataStart && candidate.from < dataEnd)) {
      const share = (t: number) => 1 / Math.max(1, podsAt(service, t).length);
      const running = (t: number) => t >= pod.from && t < (pod.until ?? Infinity);
      // A container uses no more CPU than its limit: past it, the kernel throttles it just under.
      const throttled = (t: number) => CPU_LIMIT_CORES * (0.96 + 0.04 * hashUnit(`${pod.name}-throttled`, t));
      series.push(
        counter("container_cpu_usage_seconds_total", { namespace: NAMESPACE, pod: pod.name, container: service, node: pod.node }, times, (t) =>
          running(t) ? Math.min(throttled(t), rps(t) * 0.004 * share(t) * (1 + 0.08 * (2 * hashUnit(pod.name, t) - 1))) : Number.NaN,
        ),
      );
      series.push(
        gauge(
          "kube_pod_container_resource_limits",
          { namespace: NAMESPACE, pod: pod.name, container: service, node: pod.node, resource: "cpu", unit: "core" },
          times,
          (t) => (running(t) ? CPU_LIMIT_CORES : Number.NaN),
        ),
      );
    }
  }

  // Calls between services, as Tempo counts them from the traces: browsers' requests are a virtual node's.
  for (const { client, server, share } of CALLS) {
    const rps = requestRates.get(server);
    if (rps === undefined || (client !== "user" && !requestRates.has(client))) continue;
    series.push(
      counter(
        "traces_service_graph_request_total",
        { client, server, ...(client === "user" ? { connection_type: "virtual_node" } : {}) },
        times,
        (t) => rps(t) * share,
      ),
    );
  }

  // Pods: memory in use (cAdvisor's working set) and the limit (kube-state-metrics), per pod.
  for (const pod of pods.filter((candidate) => (candidate.until ?? Infinity) > dataStart && candidate.from < dataEnd)) {
    const labels = { namespace: NAMESPACE, pod: pod.name, container: pod.service, node: pod.node };
    const share = changes.podMemory?.[pod.service] ?? (() => USUAL_MEMORY_SHARE[pod.service]);
    const running = (t: number) => t >= pod.from && t < (pod.until ?? Infinity);
    series.push(
      gauge("container_memory_working_set_bytes", labels, times, (t) =>
        running(t) ? Math.round(MEMORY_LIMIT_BYTES * share(pod, t) * (1 + 0.01 * (2 * hashUnit(`${pod.name}-mem`, t) - 1))) : Number.NaN,
      ),
    );
    series.push(
      gauge("kube_pod_container_resource_limits", { ...labels, resource: "memory", unit: "byte" }, times, (t) =>
        running(t) ? MEMORY_LIMIT_BYTES : Number.NaN,
      ),
    );
  }

  // Nodes: memory in use and major page faults.
  const usualMemory: Record<NodeName, number> = { "node-1": 0.46, "node-2": 0.52, "node-3": 0.58 };
  for (const node of NODES) {
    const used = jittered(changes.nodeMemoryUsed?.[node] ?? constant(usualMemory[node]), `${node}-mem`, 0.01);
    series.push(gauge("node_memory_MemTotal_bytes", { node, instance: `${node}:9100` }, times, constant(NODE_MEMORY_BYTES)));
    series.push(
      gauge("node_memory_MemAvailable_bytes", { node, instance: `${node}:9100` }, times, (t) => Math.round(NODE_MEMORY_BYTES * (1 - Math.min(0.995, used(t))))),
    );
    series.push(
      counter(
        "node_vmstat_pgmajfault_total",
        { node, instance: `${node}:9100` },
        times,
        jittered(changes.nodeMajorFaults?.[node] ?? constant(3), `${node}-pgmaj`, 0.2),
      ),
    );
    for (const cpu of ["0", "1"]) {
      series.push(
        counter(
          "node_cpu_seconds_total",
          { node, instance: `${node}:9100`, cpu, mode: "iowait" },
          times,
          jittered(changes.nodeIowait?.[node] ?? constant(0.02), `${node}-iowait-${cpu}`, 0.2),
        ),
      );
    }
  }

  // Dependencies: blackbox probes and the callers' own view of each call.
  for (const { dependency, consumer, host } of DEPENDENCIES) {
    const probe = changes.probes?.[dependency] ?? constant(1);
    series.push(gauge("probe_success", { job: "blackbox", dependency, consumer, instance: `https://${host}/health` }, times, probe));
    const calls = jittered(constant(dependency === "shipping-api" ? 4 : 12), `${dependency}-calls`, 0.05);
    const failing = changes.dependencyErrorShare?.[dependency] ?? constant(0.002);
    series.push(counter("upstream_requests_total", { service: consumer, upstream: dependency, outcome: "ok" }, times, (t) => calls(t) * (1 - failing(t))));
    series.push(counter("upstream_requests_total", { service: consumer, upstream: dependency, outcome: "error" }, times, (t) => calls(t) * failing(t)));
  }

  // Databases: open connections and the limit.
  for (const { db, connections, maxConnections } of DATABASES) {
    const open = changes.dbConnections?.[db] ?? jittered(constant(connections), `${db}-conn`, 0.08);
    series.push(gauge("pg_stat_activity_count", { db, datname: db.replace(/-db$/, "") }, times, (t) => Math.min(maxConnections, Math.round(open(t)))));
    series.push(gauge("pg_settings_max_connections", { db }, times, constant(maxConnections)));
  }

  const world: ShopWorld = {
    clock,
    data: { series, alerts, logStreams: [], documents, kubernetes },
    pods,
    addServiceLogs(service, lines) {
      for (const line of lines) {
        const running = podsAt(service, Math.floor(line.at.getTime() / 1000));
        const pod = running[Math.floor(hashUnit(line.line, line.at.getTime()) * running.length)] ?? pods.find((candidate) => candidate.service === service);
        if (pod === undefined) continue;
        streamOf(logStreams, { namespace: NAMESPACE, app: service, pod: pod.name, node: pod.node }).entries.push(line);
      }
    },
    addDatabaseLogs(db, lines) {
      streamOf(logStreams, { namespace: NAMESPACE, app: "postgres", db }).entries.push(...lines);
    },
    addAlert({ name, labels, severity, startsAtMinutes, summary }) {
      alerts.push({
        labels: { alertname: name, ...labels, severity },
        annotations: { summary },
        startsAt: clock.at(startsAtMinutes),
        // Still firing when the test asks: Alertmanager's API leaves resolved alerts out.
        endsAt: clock.at(240),
        generatorURL: `http://prometheus.shop.example/graph?g0.expr=${encodeURIComponent(name)}`,
      });
    },
    addEvent(event) {
      const first = clock.at(event.firstMinutes).toISOString();
      const last = clock.at(event.lastMinutes ?? event.firstMinutes).toISOString();
      kubernetes.events.push({
        apiVersion: "v1",
        kind: "Event",
        metadata: {
          name: `${event.name}.${hexId(`${event.name}-${event.reason}`, event.firstMinutes, 16)}`,
          namespace: event.namespace,
          creationTimestamp: first,
        },
        involvedObject: {
          kind: event.kind,
          name: event.name,
          namespace: event.namespace,
          apiVersion: event.kind === "Node" ? "v1" : event.kind === "Pod" ? "v1" : "apps/v1",
        },
        reason: event.reason,
        message: event.message,
        type: event.warning ? "Warning" : "Normal",
        count: event.count ?? 1,
        firstTimestamp: first,
        lastTimestamp: last,
        source: { component: event.component ?? "kubelet", ...(event.host === undefined ? {} : { host: event.host }) },
        reportingComponent: event.component ?? "kubelet",
      });
    },
    setPodStatus(podName, status) {
      const pod = kubernetes.pods.find((candidate) => candidate.metadata.name === podName);
      if (pod === undefined) throw new Error(`no current pod ${podName}`);
      const containerStatus = (pod.status as { containerStatuses: Array<Record<string, unknown>> }).containerStatuses[0];
      if (containerStatus === undefined) return;
      containerStatus.restartCount = status.restartCount;
      if (status.lastTermination !== undefined) {
        const finishedAt = clock.at(status.lastTermination.atMinutes).toISOString();
        containerStatus.lastState = {
          terminated: {
            reason: status.lastTermination.reason,
            exitCode: status.lastTermination.exitCode,
            startedAt: clock.at(status.lastTermination.atMinutes - 3).toISOString(),
            finishedAt,
          },
        };
        containerStatus.state =
          status.waiting === undefined
            ? { running: { startedAt: clock.at(status.lastTermination.atMinutes + 0.2).toISOString() } }
            : { waiting: { reason: status.waiting } };
        containerStatus.ready = status.waiting === undefined;
      }
    },
  };

  addUsualLogs(world, services, logsFrom, logsTo);
  addUsualProxyLogs(documents, services, logsFrom, logsTo, changes);
  addUsualAlerts(world);
  addUsualEvents(world);
  world.data.logStreams = [...logStreams.values()];
  return world;
}

/** Sorts every stream's lines by time: call once a scenario has added its own. */
export function finish(world: ShopWorld): ScenarioData {
  for (const stream of world.data.logStreams) stream.entries.sort((a, b) => a.at.getTime() - b.at.getTime());
  return world.data;
}

function streamOf(streams: Map<string, LogStream>, labels: Record<string, string>): LogStream {
  const key = JSON.stringify(labels);
  let stream = streams.get(key);
  if (stream === undefined) {
    stream = { labels, entries: [] };
    streams.set(key, stream);
  }
  return stream;
}

function addUsualLogs(world: ShopWorld, services: readonly ServiceName[], from: Date, to: Date): void {
  const paths: Record<ServiceName, string> = {
    checkout: "/api/checkout",
    cart: "/api/cart",
    catalog: "/api/products",
    orders: "/api/orders",
    search: "/api/search",
    recommendations: "/api/recommendations",
    storefront: "/products",
  };
  for (const service of services) {
    world.addServiceLogs(
      service,
      linesAt(
        `${service}-info`,
        from,
        to,
        constant(4),
        (n) => `level=info msg="request handled" method=GET path=${paths[service]} status=200 duration=${12 + (n % 40)}ms`,
      ),
    );
    const usual = USUAL_ERRORS[service];
    world.addServiceLogs(
      service,
      linesAt(`${service}-usual-error`, from, to, constant(usual.perMinute), (n) => usual.render(n)),
    );
    world.addServiceLogs(
      service,
      linesAt(`${service}-warn`, from, to, constant(0.3), (n) => `level=warn msg="slow request" path=${paths[service]} duration=${900 + n}ms`),
    );
  }
  for (const { db } of DATABASES) {
    world.addDatabaseLogs(
      db,
      linesAt(
        `${db}-checkpoint`,
        from,
        to,
        constant(0.2),
        (n) => `LOG:  checkpoint complete: wrote ${300 + n * 7} buffers (1.${n % 9}%); distance=${1200 + n} kB`,
      ),
    );
    world.addDatabaseLogs(
      db,
      linesAt(
        `${db}-dup`,
        from,
        to,
        constant(0.5),
        (n) =>
          `ERROR:  duplicate key value violates unique constraint "${db.replace(/-db$/, "")}_idempotency_key" DETAIL: Key (key)=(k-${hexId(db, n, 10)}) already exists.`,
      ),
    );
  }
}

/** Envoy sidecar access logs, one index per day as Filebeat writes them, with a rare upstream connection failure. */
function addUsualProxyLogs(documents: FakeDocument[], services: readonly ServiceName[], from: Date, to: Date, changes: ShopChanges): void {
  const index = `envoy-${from.toISOString().slice(0, 10).replaceAll("-", ".")}`;
  for (const service of services) {
    for (const line of linesAt(`${service}-envoy`, from, to, constant(3), () => "")) {
      documents.push(envoyDocument(index, service, line.at, { upstream: `${service}-local`, status: 200, flags: "-", host: `${service}.shop.svc` }));
    }
  }
  for (const { dependency, consumer, host } of DEPENDENCIES) {
    const failing = changes.dependencyErrorShare?.[dependency];
    // Calls that fail to connect: rare in normal times, as a share of a few sampled calls a minute otherwise.
    const perMinute: Shape = (t) => (failing === undefined ? 0.1 : Math.max(0.1, 40 * failing(t)));
    for (const line of linesAt(`${dependency}-uf`, from, to, perMinute, () => "")) {
      documents.push(envoyDocument(index, consumer, line.at, { upstream: dependency, status: 503, flags: "UF", host }));
    }
  }
}

function envoyDocument(index: string, service: string, at: Date, call: { upstream: string; status: number; flags: string; host: string }): FakeDocument {
  const duration = call.flags === "UF" ? 1000 + Math.floor(hashUnit(service, at.getTime()) * 20) : 5 + Math.floor(hashUnit(service, at.getTime()) * 60);
  const requestId = `${hexId(`${service}-req`, at.getTime(), 8)}-${hexId(`${service}-req2`, at.getTime(), 4)}`;
  const message =
    call.flags === "UF"
      ? `upstream connect error or disconnect/reset before headers. reset reason: connection failure, transport failure reason: delayed connect error: 111 upstream=${call.upstream} host=${call.host} request_id=${requestId}`
      : `"POST /v1/${call.upstream} HTTP/1.1" ${call.status} ${call.flags} duration=${duration}ms host=${call.host} request_id=${requestId}`;
  return {
    index,
    source: {
      "@timestamp": at.toISOString(),
      service,
      namespace: NAMESPACE,
      upstream_cluster: call.upstream,
      response_code: call.status,
      response_flags: call.flags,
      duration_ms: duration,
      message,
    },
  };
}

function addUsualAlerts(world: ShopWorld): void {
  world.addAlert({
    name: "Watchdog",
    labels: { namespace: "monitoring" },
    severity: "none",
    startsAtMinutes: -3 * 1440,
    summary: "An alert that should always be firing to certify that Alertmanager is working properly.",
  });
  world.addAlert({
    name: "DiskSpaceLow",
    labels: { node: "node-3", instance: "node-3:9100", mountpoint: "/var/lib/containerd" },
    severity: "warning",
    startsAtMinutes: -5 * 60,
    summary: "Filesystem /var/lib/containerd on node-3 has less than 15% space left.",
  });
  world.addAlert({
    name: "KubePodCrashLooping",
    labels: { namespace: NAMESPACE, pod: "report-generator-5d4c7b9f8-q7k2m", container: "report-generator" },
    severity: "warning",
    startsAtMinutes: -6 * 60,
    summary: "Pod shop/report-generator-5d4c7b9f8-q7k2m is crash looping.",
  });
  world.addAlert({
    name: "CertificateExpiringSoon",
    labels: { service: "cart", namespace: NAMESPACE },
    severity: "info",
    startsAtMinutes: -26 * 60,
    summary: "The TLS certificate of cart.shop.example expires in 13 days.",
  });
}

function addUsualEvents(world: ShopWorld): void {
  const { clock } = world;
  // report-generator: a crash-looping pod on node-1, outside every service's scope but in the namespace.
  const pod = "report-generator-5d4c7b9f8-q7k2m";
  world.data.kubernetes.pods.push({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: pod, namespace: NAMESPACE, labels: { app: "report-generator" }, creationTimestamp: clock.at(-6 * 60).toISOString() },
    spec: { nodeName: "node-1", containers: [{ name: "report-generator", image: `${REGISTRY}/report-generator:v0.4` }] },
    status: {
      phase: "Running",
      startTime: clock.at(-6 * 60).toISOString(),
      containerStatuses: [
        {
          name: "report-generator",
          image: `${REGISTRY}/report-generator:v0.4`,
          ready: false,
          restartCount: 71,
          state: { waiting: { reason: "CrashLoopBackOff", message: "back-off 5m0s restarting failed container" } },
          lastState: { terminated: { reason: "Error", exitCode: 1, startedAt: clock.at(-3).toISOString(), finishedAt: clock.at(-2.5).toISOString() } },
        },
      ],
    },
  });
  world.addEvent({
    namespace: NAMESPACE,
    kind: "Pod",
    name: pod,
    reason: "BackOff",
    message: "Back-off restarting failed container report-generator in pod report-generator-5d4c7b9f8-q7k2m",
    warning: true,
    firstMinutes: -6 * 60,
    lastMinutes: -1,
    count: 352,
    host: "node-1",
  });
  // cart's rollout 35 minutes before the issue.
  addRolloutEvents(world, "cart", NORMAL_REVISIONS.cart[1] as Revision);
  // search: a readiness probe that fails now and then.
  world.addEvent({
    namespace: NAMESPACE,
    kind: "Pod",
    name: world.pods.find((candidate) => candidate.service === "search")?.name ?? "search",
    reason: "Unhealthy",
    message: "Readiness probe failed: HTTP probe failed with statuscode: 503",
    warning: true,
    firstMinutes: -50,
    lastMinutes: -20,
    count: 4,
  });
}

/** The events of a rolling update: the Deployment scales the new ReplicaSet, its pods are scheduled and start. */
export function addRolloutEvents(world: ShopWorld, service: ServiceName, revision: Revision): void {
  const rs = `${service}-${replicaSetHash(service, revision)}`;
  world.addEvent({
    namespace: NAMESPACE,
    kind: "Deployment",
    name: service,
    reason: "ScalingReplicaSet",
    message: `Scaled up replica set ${rs} to 1`,
    warning: false,
    firstMinutes: revision.atMinutes,
    component: "deployment-controller",
  });
  for (const pod of world.pods.filter((candidate) => candidate.service === service && candidate.revision === revision)) {
    const at = (pod.from - world.clock.seconds(0)) / 60;
    world.addEvent({
      namespace: NAMESPACE,
      kind: "Pod",
      name: pod.name,
      reason: "Scheduled",
      message: `Successfully assigned shop/${pod.name} to ${pod.node}`,
      warning: false,
      firstMinutes: at,
      component: "default-scheduler",
    });
    world.addEvent({
      namespace: NAMESPACE,
      kind: "Pod",
      name: pod.name,
      reason: "Pulling",
      message: `Pulling image "${imageOf(service, revision)}"`,
      warning: false,
      firstMinutes: at + 0.05,
      host: pod.node,
    });
    world.addEvent({
      namespace: NAMESPACE,
      kind: "Pod",
      name: pod.name,
      reason: "Started",
      message: `Started container ${service}`,
      warning: false,
      firstMinutes: at + 0.4,
      host: pod.node,
    });
  }
}

/** The pod-template hash of a revision, as Kubernetes names its ReplicaSet and pods. */
export function replicaSetHash(service: string, revision: Revision): string {
  return hexId(`${service}-rs`, revision.revision, 10).replace(/^[0-9]/, "b");
}

/** The image of a revision. */
export function imageOf(service: string, revision: Revision): string {
  return `${REGISTRY}/${service}:${revision.version}`;
}

function deployment(service: ServiceName, revisions: readonly Revision[], clock: Clock): KubernetesObject {
  const current = revisions[revisions.length - 1] as Revision;
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      name: service,
      namespace: NAMESPACE,
      uid: uid(service, 0),
      labels: { app: service },
      annotations: { "deployment.kubernetes.io/revision": String(current.revision) },
      creationTimestamp: clock.at(-200 * 1440).toISOString(),
      generation: current.revision,
    },
    spec: {
      replicas: REPLICAS[service],
      selector: { matchLabels: { app: service } },
      template: { metadata: { labels: { app: service } }, spec: { containers: [{ name: service, image: imageOf(service, current) }] } },
    },
    status: { replicas: REPLICAS[service], readyReplicas: REPLICAS[service], updatedReplicas: REPLICAS[service], observedGeneration: current.revision },
  };
}

function replicaSet(service: ServiceName, revision: Revision, revisions: readonly Revision[], clock: Clock): KubernetesObject {
  const current = revisions[revisions.length - 1] === revision;
  const hash = replicaSetHash(service, revision);
  return {
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: {
      name: `${service}-${hash}`,
      namespace: NAMESPACE,
      uid: uid(service, revision.revision),
      labels: { app: service, "pod-template-hash": hash },
      annotations: { "deployment.kubernetes.io/revision": String(revision.revision) },
      creationTimestamp: clock.at(revision.atMinutes).toISOString(),
      ownerReferences: [{ apiVersion: "apps/v1", kind: "Deployment", name: service, uid: uid(service, 0), controller: true }],
    },
    spec: {
      replicas: current ? REPLICAS[service] : 0,
      selector: { matchLabels: { app: service, "pod-template-hash": hash } },
      template: {
        metadata: { labels: { app: service, "pod-template-hash": hash } },
        spec: { containers: [{ name: service, image: imageOf(service, revision) }] },
      },
    },
    status: { replicas: current ? REPLICAS[service] : 0, readyReplicas: current ? REPLICAS[service] : 0 },
  };
}

function podObject(pod: PodInfo): KubernetesObject {
  const hash = replicaSetHash(pod.service, pod.revision);
  const started = new Date(pod.from * 1000).toISOString();
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: pod.name,
      namespace: NAMESPACE,
      labels: { app: pod.service, "pod-template-hash": hash },
      creationTimestamp: started,
      ownerReferences: [
        { apiVersion: "apps/v1", kind: "ReplicaSet", name: `${pod.service}-${hash}`, uid: uid(pod.service, pod.revision.revision), controller: true },
      ],
    },
    spec: { nodeName: pod.node, containers: [{ name: pod.service, image: imageOf(pod.service, pod.revision) }] },
    status: {
      phase: "Running",
      startTime: started,
      containerStatuses: [
        { name: pod.service, image: imageOf(pod.service, pod.revision), ready: true, restartCount: 0, state: { running: { startedAt: started } } },
      ],
    },
  };
}

function uid(service: string, n: number): string {
  const hex = hexId(`${service}-uid`, n, 32);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
