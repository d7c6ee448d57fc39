import { z } from "zod";

/**
 * The parts of the Kubernetes API's JSON that the analysis reads (core/v1, apps/v1, discovery.k8s.io/v1,
 * storage.k8s.io/v1), under the API's own field names; every other field is dropped when parsed. Times
 * are RFC 3339, quantities the API's strings ("250m", "64Mi"). A hand-written bundle needs only the fields
 * it has: all but an object's name are optional.
 */

const Labels = z.record(z.string(), z.string());
const KubernetesTime = z.iso.datetime({ offset: true });
/** A port by number or by its name (`targetPort`, a probe's `port`). */
const IntOrString = z.union([z.number(), z.string()]);
/** Resource quantities by resource name: `{ cpu: "250m", memory: "64Mi", pods: "10" }`. */
const Quantities = z.record(z.string(), z.string());

const ObjectMeta = z.object({
  name: z.string(),
  namespace: z.string().optional(),
  uid: z.string().optional(),
  creationTimestamp: KubernetesTime.optional(),
  labels: Labels.optional(),
  annotations: Labels.optional(),
  ownerReferences: z.array(z.object({ kind: z.string(), name: z.string(), uid: z.string().optional() })).optional(),
  deletionTimestamp: KubernetesTime.optional(),
});

export const KubernetesEvent = z.object({
  metadata: ObjectMeta,
  /** `fieldPath` names a pod's container when the event is about one (`spec.containers{checkout}`). */
  involvedObject: z.object({ kind: z.string().optional(), name: z.string().optional(), namespace: z.string().optional(), fieldPath: z.string().optional() }),
  reason: z.string().optional(),
  message: z.string().optional(),
  type: z.string().optional(),
  count: z.number().optional(),
  firstTimestamp: KubernetesTime.nullish(),
  lastTimestamp: KubernetesTime.nullish(),
  eventTime: KubernetesTime.nullish(),
  series: z.object({ lastObservedTime: KubernetesTime.optional(), count: z.number().optional() }).nullish(),
  /** Who reported it: `default-scheduler`, `kubelet` (with the node as `host`), `replicaset-controller`. */
  source: z.object({ component: z.string().optional(), host: z.string().optional() }).optional(),
});
export type KubernetesEvent = z.infer<typeof KubernetesEvent>;

export const Probe = z.object({
  httpGet: z.object({ path: z.string().optional(), port: IntOrString, scheme: z.string().optional() }).optional(),
  tcpSocket: z.object({ port: IntOrString }).optional(),
  grpc: z.object({ port: z.number(), service: z.string().optional() }).optional(),
  exec: z.object({ command: z.array(z.string()).optional() }).optional(),
  initialDelaySeconds: z.number().optional(),
  periodSeconds: z.number().optional(),
  timeoutSeconds: z.number().optional(),
  failureThreshold: z.number().optional(),
  successThreshold: z.number().optional(),
});
export type Probe = z.infer<typeof Probe>;

/** An environment variable: its literal value, or the ConfigMap or Secret key it comes from (by name only). */
const EnvVar = z.object({
  name: z.string(),
  value: z.string().optional(),
  valueFrom: z
    .object({
      configMapKeyRef: z.object({ name: z.string(), key: z.string().optional(), optional: z.boolean().optional() }).optional(),
      secretKeyRef: z.object({ name: z.string(), key: z.string().optional(), optional: z.boolean().optional() }).optional(),
    })
    .optional(),
});

const Container = z.object({
  name: z.string(),
  image: z.string().optional(),
  command: z.array(z.string()).optional(),
  args: z.array(z.string()).optional(),
  ports: z.array(z.object({ name: z.string().optional(), containerPort: z.number(), protocol: z.string().optional() })).optional(),
  env: z.array(EnvVar).optional(),
  envFrom: z
    .array(
      z.object({
        configMapRef: z.object({ name: z.string(), optional: z.boolean().optional() }).optional(),
        secretRef: z.object({ name: z.string(), optional: z.boolean().optional() }).optional(),
      }),
    )
    .optional(),
  resources: z.object({ requests: Quantities.optional(), limits: Quantities.optional() }).optional(),
  livenessProbe: Probe.optional(),
  readinessProbe: Probe.optional(),
  startupProbe: Probe.optional(),
  volumeMounts: z.array(z.object({ name: z.string(), mountPath: z.string(), readOnly: z.boolean().optional() })).optional(),
  securityContext: z
    .object({ runAsUser: z.number().optional(), runAsNonRoot: z.boolean().optional(), readOnlyRootFilesystem: z.boolean().optional() })
    .optional(),
});
export type Container = z.infer<typeof Container>;

const LabelSelectorRequirement = z.object({ key: z.string(), operator: z.string(), values: z.array(z.string()).optional() });
const LabelSelector = z.object({ matchLabels: Labels.optional(), matchExpressions: z.array(LabelSelectorRequirement).optional() });
const NodeSelectorTerm = z.object({
  matchExpressions: z.array(LabelSelectorRequirement).optional(),
  matchFields: z.array(LabelSelectorRequirement).optional(),
});
const PodAffinityTerm = z.object({ labelSelector: LabelSelector.optional(), topologyKey: z.string(), namespaces: z.array(z.string()).optional() });

const Affinity = z.object({
  nodeAffinity: z
    .object({
      requiredDuringSchedulingIgnoredDuringExecution: z.object({ nodeSelectorTerms: z.array(NodeSelectorTerm) }).optional(),
    })
    .optional(),
  podAffinity: z.object({ requiredDuringSchedulingIgnoredDuringExecution: z.array(PodAffinityTerm).optional() }).optional(),
  podAntiAffinity: z.object({ requiredDuringSchedulingIgnoredDuringExecution: z.array(PodAffinityTerm).optional() }).optional(),
});

export const Toleration = z.object({
  key: z.string().optional(),
  operator: z.string().optional(),
  value: z.string().optional(),
  effect: z.string().optional(),
});
export type Toleration = z.infer<typeof Toleration>;

const Volume = z.object({
  name: z.string(),
  persistentVolumeClaim: z.object({ claimName: z.string() }).optional(),
  configMap: z.object({ name: z.string(), optional: z.boolean().optional() }).optional(),
  secret: z.object({ secretName: z.string(), optional: z.boolean().optional() }).optional(),
  hostPath: z.object({ path: z.string() }).optional(),
  emptyDir: z.object({}).optional(),
});

export const PodSpec = z.object({
  containers: z.array(Container),
  initContainers: z.array(Container).optional(),
  nodeName: z.string().optional(),
  nodeSelector: Labels.optional(),
  affinity: Affinity.optional(),
  tolerations: z.array(Toleration).optional(),
  serviceAccountName: z.string().optional(),
  imagePullSecrets: z.array(z.object({ name: z.string() })).optional(),
  volumes: z.array(Volume).optional(),
  schedulerName: z.string().optional(),
  securityContext: z.object({ runAsUser: z.number().optional(), fsGroup: z.number().optional() }).optional(),
});
export type PodSpec = z.infer<typeof PodSpec>;

/**
 * A template's metadata (a pod template's, a claim template's): the API server writes a template's
 * `creationTimestamp` as `null` (a zero time, `{"metadata":{"creationTimestamp":null,"labels":…}}`), and a
 * template has no creation time to read, so the field is left out.
 */
const TemplateMeta = ObjectMeta.omit({ creationTimestamp: true });

const PodTemplate = z.object({ metadata: TemplateMeta.partial().optional(), spec: PodSpec });

const ContainerState = z.object({
  waiting: z.object({ reason: z.string().optional(), message: z.string().optional() }).optional(),
  running: z.object({ startedAt: KubernetesTime.optional() }).optional(),
  terminated: z
    .object({
      reason: z.string().optional(),
      exitCode: z.number().optional(),
      startedAt: KubernetesTime.nullish(),
      finishedAt: KubernetesTime.nullish(),
      message: z.string().optional(),
    })
    .optional(),
});

export const ContainerStatus = z.object({
  name: z.string(),
  restartCount: z.number(),
  ready: z.boolean().optional(),
  started: z.boolean().optional(),
  image: z.string().optional(),
  state: ContainerState.optional(),
  lastState: ContainerState.optional(),
});
export type ContainerStatus = z.infer<typeof ContainerStatus>;

/** A condition of a pod, node or workload: `{type: "PodScheduled", status: "False", reason: "Unschedulable", message}`. */
const Condition = z.object({
  type: z.string(),
  status: z.string(),
  reason: z.string().optional(),
  message: z.string().optional(),
  lastTransitionTime: KubernetesTime.nullish(),
  lastHeartbeatTime: KubernetesTime.nullish(),
});
export type Condition = z.infer<typeof Condition>;

export const Pod = z.object({
  metadata: ObjectMeta,
  spec: PodSpec.optional(),
  status: z
    .object({
      phase: z.string().optional(),
      reason: z.string().optional(),
      message: z.string().optional(),
      conditions: z.array(Condition).optional(),
      hostIP: z.string().optional(),
      podIP: z.string().optional(),
      startTime: KubernetesTime.optional(),
      containerStatuses: z.array(ContainerStatus).optional(),
      initContainerStatuses: z.array(ContainerStatus).optional(),
    })
    .optional(),
});
export type Pod = z.infer<typeof Pod>;

const WorkloadStatus = z.object({
  replicas: z.number().optional(),
  readyReplicas: z.number().optional(),
  availableReplicas: z.number().optional(),
  updatedReplicas: z.number().optional(),
  unavailableReplicas: z.number().optional(),
  conditions: z.array(Condition).optional(),
});

export const Deployment = z.object({
  metadata: ObjectMeta,
  spec: z.object({ replicas: z.number().optional(), selector: LabelSelector.optional(), template: PodTemplate }),
  status: WorkloadStatus.optional(),
});
export type Deployment = z.infer<typeof Deployment>;

export const PersistentVolumeClaim = z.object({
  metadata: ObjectMeta,
  spec: z
    .object({
      accessModes: z.array(z.string()).optional(),
      storageClassName: z.string().nullish(),
      volumeName: z.string().optional(),
      selector: LabelSelector.optional(),
      resources: z.object({ requests: Quantities.optional() }).optional(),
    })
    .optional(),
  status: z.object({ phase: z.string().optional(), capacity: Quantities.optional() }).optional(),
});
export type PersistentVolumeClaim = z.infer<typeof PersistentVolumeClaim>;

export const StatefulSet = z.object({
  metadata: ObjectMeta,
  spec: z.object({
    replicas: z.number().optional(),
    selector: LabelSelector.optional(),
    template: PodTemplate,
    volumeClaimTemplates: z.array(PersistentVolumeClaim.extend({ metadata: TemplateMeta })).optional(),
  }),
  status: WorkloadStatus.optional(),
});
export type StatefulSet = z.infer<typeof StatefulSet>;

export const ReplicaSet = z.object({
  metadata: ObjectMeta,
  spec: z.object({ replicas: z.number().optional(), template: PodTemplate }),
  status: WorkloadStatus.optional(),
});
export type ReplicaSet = z.infer<typeof ReplicaSet>;

export const ServicePort = z.object({
  name: z.string().optional(),
  port: z.number(),
  targetPort: IntOrString.optional(),
  protocol: z.string().optional(),
  nodePort: z.number().optional(),
});
export type ServicePort = z.infer<typeof ServicePort>;

export const Service = z.object({
  metadata: ObjectMeta,
  spec: z.object({
    type: z.string().optional(),
    selector: Labels.optional(),
    ports: z.array(ServicePort).optional(),
    clusterIP: z.string().optional(),
  }),
});
export type Service = z.infer<typeof Service>;

/** A Service's endpoints (discovery.k8s.io/v1): the `kubernetes.io/service-name` label names the Service. */
export const EndpointSlice = z.object({
  metadata: ObjectMeta,
  ports: z.array(z.object({ name: z.string().optional(), port: z.number().optional(), protocol: z.string().optional() })).nullish(),
  endpoints: z
    .array(
      z.object({
        addresses: z.array(z.string()),
        conditions: z.object({ ready: z.boolean().nullish(), serving: z.boolean().nullish() }).optional(),
        nodeName: z.string().optional(),
        targetRef: z.object({ kind: z.string().optional(), name: z.string() }).optional(),
      }),
    )
    .nullish(),
});
export type EndpointSlice = z.infer<typeof EndpointSlice>;

export const Node = z.object({
  metadata: ObjectMeta,
  spec: z
    .object({
      unschedulable: z.boolean().optional(),
      taints: z.array(z.object({ key: z.string(), value: z.string().optional(), effect: z.string() })).optional(),
    })
    .optional(),
  status: z
    .object({
      conditions: z.array(Condition).optional(),
      capacity: Quantities.optional(),
      allocatable: Quantities.optional(),
    })
    .optional(),
});
export type Node = z.infer<typeof Node>;

export const ResourceQuota = z.object({
  metadata: ObjectMeta,
  spec: z.object({ hard: Quantities.optional() }).optional(),
  status: z.object({ hard: Quantities.optional(), used: Quantities.optional() }).optional(),
});
export type ResourceQuota = z.infer<typeof ResourceQuota>;

export const PersistentVolume = z.object({
  metadata: ObjectMeta,
  spec: z
    .object({
      accessModes: z.array(z.string()).optional(),
      capacity: Quantities.optional(),
      storageClassName: z.string().optional(),
      claimRef: z.object({ name: z.string().optional(), namespace: z.string().optional() }).nullish(),
      persistentVolumeReclaimPolicy: z.string().optional(),
    })
    .optional(),
  status: z.object({ phase: z.string().optional() }).optional(),
});
export type PersistentVolume = z.infer<typeof PersistentVolume>;

export const StorageClass = z.object({ metadata: ObjectMeta, provisioner: z.string().optional(), volumeBindingMode: z.string().optional() });
export type StorageClass = z.infer<typeof StorageClass>;

/** The last lines a container wrote (`GET …/pods/{pod}/log`), of its previous run when it restarted. */
export const ContainerLog = z.object({
  pod: z.string(),
  container: z.string(),
  previous: z.boolean().optional(),
  lines: z.array(z.string()),
});
export type ContainerLog = z.infer<typeof ContainerLog>;

/**
 * One namespace's state at the read, and the cluster's around it: its pods (spec and status), events,
 * workloads with their ReplicaSets, Services and EndpointSlices, quotas, claims; the cluster's nodes,
 * volumes and storage classes; the kube-system pods (the node components and the control plane); the
 * names of its ServiceAccounts, ConfigMaps and Secrets (never their data); and the last log lines of the
 * containers that are not ready. A list left out (not readable, or not asked) is absent, not empty.
 */
export const KubernetesState = z.object({
  namespace: z.string(),
  /** When the state was read: "now" for the objects' ages and the events' recency. */
  readAt: KubernetesTime.optional(),
  pods: z.array(Pod).optional(),
  events: z.array(KubernetesEvent).optional(),
  deployments: z.array(Deployment).optional(),
  statefulSets: z.array(StatefulSet).optional(),
  replicaSets: z.array(ReplicaSet).optional(),
  services: z.array(Service).optional(),
  endpointSlices: z.array(EndpointSlice).optional(),
  resourceQuotas: z.array(ResourceQuota).optional(),
  persistentVolumeClaims: z.array(PersistentVolumeClaim).optional(),
  serviceAccounts: z.array(z.string()).optional(),
  configMaps: z.array(z.string()).optional(),
  secrets: z.array(z.string()).optional(),
  nodes: z.array(Node).optional(),
  persistentVolumes: z.array(PersistentVolume).optional(),
  storageClasses: z.array(StorageClass).optional(),
  systemPods: z.array(Pod).optional(),
  containerLogs: z.array(ContainerLog).optional(),
});
export type KubernetesState = z.infer<typeof KubernetesState>;
