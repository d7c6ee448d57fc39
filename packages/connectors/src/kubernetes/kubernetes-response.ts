import { z } from "zod";

// The objects this connector reads (Event, Pod, Deployment, ReplicaSet, and the state's) are its
// observations' items: their schemas are in @pes/contracts (kubernetes-objects.ts), which bundles are read with.

/** An error answer of the API server. */
export const KubernetesStatus = z.object({ kind: z.literal("Status"), message: z.string(), reason: z.string().optional(), code: z.number().optional() });

/** A List answer (`EventList`, `PodList`…): its items. */
export function listOf<T extends z.ZodType>(item: T) {
  return z.object({ items: z.array(item) });
}
