import { z } from "zod";

/**
 * The parts of the Kubernetes API's JSON this connector reads (core/v1 Event and Pod, apps/v1
 * Deployment and ReplicaSet, meta/v1 Status); everything else is ignored. Times are RFC 3339.
 */
const Time = z.iso.datetime({ offset: true });
const Labels = z.record(z.string(), z.string());

const ObjectMeta = z.object({
  name: z.string(),
  uid: z.string().optional(),
  creationTimestamp: Time.optional(),
  labels: Labels.optional(),
  annotations: Labels.optional(),
  ownerReferences: z.array(z.object({ kind: z.string(), name: z.string(), uid: z.string() })).optional(),
});

/** An error answer of the API server. */
export const KubernetesStatus = z.object({ kind: z.literal("Status"), message: z.string(), reason: z.string().optional(), code: z.number().optional() });

export const KubernetesEvent = z.object({
  metadata: ObjectMeta,
  involvedObject: z.object({ kind: z.string().optional(), name: z.string().optional() }),
  reason: z.string().optional(),
  message: z.string().optional(),
  type: z.string().optional(),
  count: z.number().optional(),
  firstTimestamp: Time.nullish(),
  lastTimestamp: Time.nullish(),
  eventTime: Time.nullish(),
  series: z.object({ lastObservedTime: Time.optional(), count: z.number().optional() }).nullish(),
});
export type KubernetesEvent = z.infer<typeof KubernetesEvent>;

const Container = z.object({ name: z.string(), image: z.string().optional() });
const PodTemplate = z.object({ spec: z.object({ containers: z.array(Container) }) });

export const Deployment = z.object({
  metadata: ObjectMeta,
  spec: z.object({ selector: z.object({ matchLabels: Labels.optional() }).optional(), template: PodTemplate }),
});
export type Deployment = z.infer<typeof Deployment>;

export const ReplicaSet = z.object({ metadata: ObjectMeta, spec: z.object({ template: PodTemplate }) });
export type ReplicaSet = z.infer<typeof ReplicaSet>;

const ContainerState = z.object({
  waiting: z.object({ reason: z.string().optional(), message: z.string().optional() }).optional(),
  running: z.object({ startedAt: Time.optional() }).optional(),
  terminated: z.object({ reason: z.string().optional(), exitCode: z.number().optional(), finishedAt: Time.nullish(), message: z.string().optional() }).optional(),
});

const ContainerStatus = z.object({ name: z.string(), restartCount: z.number(), state: ContainerState.optional(), lastState: ContainerState.optional() });
export type ContainerStatus = z.infer<typeof ContainerStatus>;

export const Pod = z.object({
  metadata: ObjectMeta,
  status: z.object({ containerStatuses: z.array(ContainerStatus).optional(), initContainerStatuses: z.array(ContainerStatus).optional() }).optional(),
});
export type Pod = z.infer<typeof Pod>;

/** A List answer (`EventList`, `PodList`…): its items. */
export function listOf<T extends z.ZodType>(item: T) {
  return z.object({ items: z.array(item) });
}
