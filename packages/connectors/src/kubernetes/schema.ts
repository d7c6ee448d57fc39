import { z } from "zod";
import { connectionFields } from "../connection-options.js";
import { BearerAuth } from "../http-auth.js";
import { isLabelKey, isLabelValue, isNamespaceName, isObjectName, literalIsValid } from "./kubernetes-names.js";

/**
 * A Kubernetes API server: its URL, its CA in `tls.ca` (a cluster's own CA, not a public one) and a
 * service account's bearer token. A client certificate, if the cluster wants one, is `tls.cert`/`tls.key`.
 */
export const KubernetesDataSource = z.strictObject({
  type: z.literal("kubernetes"),
  url: z.url({ protocol: /^https?$/ }),
  ...connectionFields,
  auth: BearerAuth.optional(),
});
export type KubernetesDataSource = z.infer<typeof KubernetesDataSource>;

const KUBERNETES_RESOURCES = ["events", "rollouts", "pods", "state"] as const;

/**
 * One action on a namespace: its `events`, the `rollouts` of its Deployments (ReplicaSet revisions), its
 * `pods`' restarts, or its whole `state` (its objects, the cluster's nodes and volumes, kube-system's pods,
 * the logs of failing containers: state-lists.ts). `name` narrows to a Deployment (rollouts) or to the
 * objects named after it (`checkout` and `checkout-…`: its pods, ReplicaSets and their events); `selector`
 * to labels; `state` takes neither. Each placeholder's filled text must be a valid name or label value,
 * else the action fails unsent.
 */
export const KubernetesAction = z
  .strictObject({
    namespace: z.string().refine((text) => literalIsValid(text, isNamespaceName), "must be a namespace name (a DNS-1123 label) or a template"),
    resource: z.enum(KUBERNETES_RESOURCES),
    name: z
      .string()
      .refine((text) => literalIsValid(text, isObjectName), "must be an object name (a DNS-1123 subdomain) or a template")
      .optional(),
    selector: z
      .record(
        z.string().refine(isLabelKey, "must be a label key"),
        z.string().refine((text) => literalIsValid(text, isLabelValue), "must be a label value or a template"),
      )
      .optional(),
  })
  .refine((action) => action.resource !== "events" || action.selector === undefined, {
    message: "events have no labels to select: narrow them with name",
    path: ["selector"],
  })
  .refine((action) => action.resource !== "state" || (action.name === undefined && action.selector === undefined), {
    message: "state reads the whole namespace: it takes neither name nor selector",
    path: ["resource"],
  });
export type KubernetesAction = z.infer<typeof KubernetesAction>;
