import type { Verdict, VerdictFinding } from "@pes/contracts";

/**
 * The one table from the analysis' cause kinds to Cloud-OpsBench's root-cause labels
 * (prompts/RCA_candidate.py `root_cause_list_str`). A kind not in it maps to nothing: a miss.
 */
export const ROOT_CAUSE_OF_KIND = {
  "quota/cpu": "namespace_cpu_quota_exceeded",
  "quota/memory": "namespace_memory_quota_exceeded",
  "quota/pods": "namespace_pod_quota_exceeded",
  "quota/services": "namespace_service_quota_exceeded",
  "quota/storage": "namespace_storage_quota_exceeded",
  "admission/service-account": "missing_service_account",
  "node/container-runtime": "containerd_unavailable",
  "node/kube-proxy": "kube_proxy_unavailable",
  "node/scheduler": "kube_scheduler_unavailable",
  "node/kubelet": "kubelet_unavailable",
  "node/network-delay": "node_network_delay",
  "node/packet-loss": "node_network_packet_loss",
  "saturation/cpu": "pod_cpu_overload",
  // Where a slowdown begins, not why: the benchmark's label for a pod that slows its callers.
  latency: "pod_network_delay",
  "probe/liveness-port": "liveness_probe_incorrect_port",
  "probe/liveness-protocol": "liveness_probe_incorrect_protocol",
  "probe/liveness-timing": "liveness_probe_incorrect_timing",
  oom: "oom_killed",
  "probe/readiness-port": "readiness_probe_incorrect_port",
  "probe/readiness-protocol": "readiness_probe_incorrect_protocol",
  "unschedulable/cpu": "cpu_capacity_mismatch",
  "unschedulable/memory": "memory_capacity_mismatch",
  "unschedulable/node-affinity": "node_affinity_mismatch",
  "unschedulable/cordoned": "node_cordon_mismatch",
  "unschedulable/node-selector": "node_selector_mismatch",
  "unschedulable/pod-anti-affinity": "pod_anti_affinity_conflict",
  "unschedulable/taint": "taint_toleration_mismatch",
  "volume/pv-occupied": "pv_binding_occupied",
  "volume/access-mode": "pvc_access_mode_mismatch",
  "volume/capacity": "pvc_capacity_mismatch",
  "volume/selector": "pvc_selector_mismatch",
  "volume/storage-class": "pvc_storage_class_mismatch",
  "dependency/wrong-address": "service_env_var_address_mismatch",
  "service/wrong-target-port": "service_port_mapping_mismatch",
  "service/wrong-protocol": "service_protocol_mismatch",
  "service/no-endpoints": "service_selector_mismatch",
  "image-pull/dns": "image_registry_dns_failure",
  "image-pull/not-found": "incorrect_image_reference",
  "image-pull/unauthorized": "missing_image_pull_secret",
  "start/permission-denied": "volume_mount_permission_denied",
} as const satisfies Record<string, string>;

export type RootCause = (typeof ROOT_CAUSE_OF_KIND)[keyof typeof ROOT_CAUSE_OF_KIND];

/**
 * Each label's taxonomy: the benchmark's categories (its case folders) by the phase the fault starts in
 * (RCA_candidate.py `taxonomy_definitions`).
 */
export const TAXONOMY_OF_ROOT_CAUSE: Record<RootCause, string> = {
  namespace_cpu_quota_exceeded: "Admission_Fault",
  namespace_memory_quota_exceeded: "Admission_Fault",
  namespace_pod_quota_exceeded: "Admission_Fault",
  namespace_service_quota_exceeded: "Admission_Fault",
  namespace_storage_quota_exceeded: "Admission_Fault",
  missing_service_account: "Admission_Fault",
  containerd_unavailable: "Infrastructure_Fault",
  kube_proxy_unavailable: "Infrastructure_Fault",
  kube_scheduler_unavailable: "Infrastructure_Fault",
  kubelet_unavailable: "Infrastructure_Fault",
  node_network_delay: "Infrastructure_Fault",
  node_network_packet_loss: "Infrastructure_Fault",
  pod_cpu_overload: "Performance_Fault",
  pod_network_delay: "Performance_Fault",
  liveness_probe_incorrect_port: "Runtime_Fault",
  liveness_probe_incorrect_protocol: "Runtime_Fault",
  liveness_probe_incorrect_timing: "Runtime_Fault",
  oom_killed: "Runtime_Fault",
  readiness_probe_incorrect_port: "Runtime_Fault",
  readiness_probe_incorrect_protocol: "Runtime_Fault",
  cpu_capacity_mismatch: "Scheduling_Fault",
  memory_capacity_mismatch: "Scheduling_Fault",
  node_affinity_mismatch: "Scheduling_Fault",
  node_cordon_mismatch: "Scheduling_Fault",
  node_selector_mismatch: "Scheduling_Fault",
  pod_anti_affinity_conflict: "Scheduling_Fault",
  taint_toleration_mismatch: "Scheduling_Fault",
  pv_binding_occupied: "Scheduling_Fault",
  pvc_access_mode_mismatch: "Scheduling_Fault",
  pvc_capacity_mismatch: "Scheduling_Fault",
  pvc_selector_mismatch: "Scheduling_Fault",
  pvc_storage_class_mismatch: "Scheduling_Fault",
  service_env_var_address_mismatch: "Service_Routing_Fault",
  service_port_mapping_mismatch: "Service_Routing_Fault",
  service_protocol_mismatch: "Service_Routing_Fault",
  service_selector_mismatch: "Service_Routing_Fault",
  image_registry_dns_failure: "Startup_Fault",
  incorrect_image_reference: "Startup_Fault",
  missing_image_pull_secret: "Startup_Fault",
  volume_mount_permission_denied: "Startup_Fault",
};

/** The benchmark's answer: `{fault_taxonomy, fault_object, root_cause}`. */
export interface AnswerTriple {
  fault_taxonomy: string;
  fault_object: string;
  root_cause: string;
}

/** The subject's kinds that are an app (`app/<name>`), a namespace or a node in the benchmark's objects. */
const OBJECT_OF_SUBJECT_KIND: Record<string, string> = {
  deployment: "app",
  statefulset: "app",
  service: "app",
  namespace: "namespace",
  node: "node",
};

/** `deployment/checkout` → `app/checkout`; `undefined` for a subject of another kind. */
export function objectOfSubject(subject: string | undefined): string | undefined {
  const slash = subject?.indexOf("/") ?? -1;
  if (subject === undefined || slash <= 0) return undefined;
  const kind = OBJECT_OF_SUBJECT_KIND[subject.slice(0, slash)];
  return kind === undefined ? undefined : `${kind}/${subject.slice(slash + 1)}`;
}

function isKnownKind(kind: string): kind is keyof typeof ROOT_CAUSE_OF_KIND {
  return Object.hasOwn(ROOT_CAUSE_OF_KIND, kind);
}

/**
 * The table's kind of a finding: its own, but for a metric at its limit, which the verdict calls
 * `saturation` whatever the resource: a CPU limit (its `detail` names the limit) or CPU throttling at
 * its threshold (the adapter's action reads the `cpu_cfs` column) is `saturation/cpu`.
 */
function tableKind(finding: Pick<VerdictFinding, "kind" | "detail" | "action">): string {
  const cpu = /\bcpu\b/i.test(finding.detail ?? "") || /: cpu_cfs$/.test(finding.action);
  return finding.kind === "saturation" && cpu ? "saturation/cpu" : finding.kind;
}

/** A metric series' subject (`namespace=boutique, service=adservice`) as the app its `service` label names. */
function serviceOfSeries(subject: string | undefined): string | undefined {
  const service = /(?:^|, )service=([^,]+)/.exec(subject ?? "")?.[1];
  return service === undefined ? undefined : `app/${service}`;
}

/** A finding as the benchmark's answer; `undefined` when its kind or subject maps to nothing. */
export function answerOf(finding: Pick<VerdictFinding, "kind" | "subject" | "detail" | "action">): AnswerTriple | undefined {
  const kind = tableKind(finding);
  if (!isKnownKind(kind)) return undefined;
  const object = objectOfSubject(finding.subject) ?? serviceOfSeries(finding.subject);
  if (object === undefined) return undefined;
  const rootCause = ROOT_CAUSE_OF_KIND[kind];
  return { fault_taxonomy: TAXONOMY_OF_ROOT_CAUSE[rootCause], fault_object: object, root_cause: rootCause };
}

/** At most three answers, as evaluation.py reads `top_3_predictions`. */
const MAX_PREDICTIONS = 3;

/**
 * A verdict's predictions, best first: the cause, the alternative, then the symptoms of a known kind not
 * already predicted (the verdict lists no other candidate). A cause or alternative that maps to nothing
 * keeps its rank as `null` (a wrong answer there), so that a later one is never promoted over it; a
 * no-cause verdict predicts nothing.
 */
export function predictionsOf(verdict: Verdict): Array<AnswerTriple | null> {
  if (verdict.conclusion === "no-cause") return [];
  const ranked: Array<AnswerTriple | null> = [];
  const seen = new Set<string>();
  const add = (answer: AnswerTriple | undefined) => {
    if (answer === undefined) {
      ranked.push(null);
      return;
    }
    const key = `${answer.fault_object} ${answer.root_cause}`;
    if (seen.has(key)) return;
    seen.add(key);
    ranked.push(answer);
  };
  if (verdict.cause !== undefined) add(answerOf(verdict.cause));
  if (verdict.alternative !== undefined) add(answerOf(verdict.alternative));
  for (const symptom of verdict.symptoms) {
    const answer = answerOf(symptom);
    if (answer !== undefined) add(answer);
  }
  return ranked.slice(0, MAX_PREDICTIONS);
}
