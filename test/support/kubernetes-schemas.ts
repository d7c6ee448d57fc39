import { ScaledObject } from "@kubernetes-models/keda/keda.sh/v1alpha1";
import { errorMessage } from "@pes/contracts";
import { Deployment } from "kubernetes-models/apps/v1";
import { HorizontalPodAutoscaler } from "kubernetes-models/autoscaling/v2";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1";
import { ClusterRole, ClusterRoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1";
import { ConfigMap, Secret, Service, ServiceAccount } from "kubernetes-models/v1";
import type { Resource } from "./kustomize.js";

/**
 * The kinds this repository's manifests use, each with its model from kubernetes-models (JSON schemas of
 * the Kubernetes API's OpenAPI document, checked with Ajv) or @kubernetes-models/keda (KEDA's CRDs). A
 * kind missing here is refused, so that no manifest goes unchecked.
 */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  "apps/v1 Deployment": Deployment,
  "autoscaling/v2 HorizontalPodAutoscaler": HorizontalPodAutoscaler,
  "policy/v1 PodDisruptionBudget": PodDisruptionBudget,
  "rbac.authorization.k8s.io/v1 ClusterRole": ClusterRole,
  "rbac.authorization.k8s.io/v1 ClusterRoleBinding": ClusterRoleBinding,
  "v1 ConfigMap": ConfigMap,
  "v1 Secret": Secret,
  "v1 Service": Service,
  "v1 ServiceAccount": ServiceAccount,
  "keda.sh/v1alpha1 ScaledObject": ScaledObject,
};

/** The schema's complaints about one resource, each naming the field (`data/spec/replicas must be integer`); empty when valid. */
export function schemaProblems(resource: Resource): string[] {
  const Model = MODELS[`${resource.apiVersion} ${resource.kind}`];
  if (Model === undefined) return [`no schema for ${resource.apiVersion} ${resource.kind}: add its model to test/support/kubernetes-schemas.ts`];
  try {
    new Model(structuredClone(resource) as never).validate();
    return [];
  } catch (error) {
    return [errorMessage(error)];
  }
}
