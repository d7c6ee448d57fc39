import type { Node, PersistentVolume, PersistentVolumeClaim, Pod } from "@pes/contracts";
import { eventOnset, someOf, type ClusterIndex, type Fault, type Workload } from "./cluster-index.js";
import { truncate } from "./outcome-text.js";
import { quantityOf } from "./quantities.js";

/**
 * Why a workload's pods are not placed on a node: the scheduler's own message (its PodScheduled
 * condition, or its latest FailedScheduling event) read for the reason that excludes the most nodes, the
 * pod's spec telling a node selector from a node affinity; an unbound claim read against the volumes;
 * pods no scheduler has looked at.
 */
export function schedulingFaults(index: ClusterIndex, workload: Workload): Fault[] {
  const pending = workload.pods.filter((pod) => pod.status?.phase === "Pending" && (pod.spec?.nodeName ?? "") === "");
  if (pending.length === 0) return [];
  const affects = someOf(pending.map((pod) => `pod/${pod.metadata.name}`));
  const [pod] = pending;
  if (pod === undefined) return [];
  const message = schedulerMessage(index, pod);
  if (message === undefined) return unscheduled(index, workload, pod, affects);
  const reason = placementReason(index, pod) ?? dominantReason(message.text);
  const base = { subject: workload.ref, affects, certainty: "decisive" as const, ...(message.onset === undefined ? {} : { onset: message.onset }) };
  const quoted = `the scheduler: "${firstSentence(message.text)}"`;
  switch (reason) {
    case "selector": {
      const bySelector = Object.keys(pod.spec?.nodeSelector ?? {}).length > 0;
      const byAffinity = (pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms.length ?? 0) > 0;
      const nodes = index.state.nodes ?? [];
      if (bySelector && (!byAffinity || nodes.length === 0 || !nodes.some((node) => selectorAdmits(pod, node)))) {
        const selector = Object.entries(pod.spec?.nodeSelector ?? {}).map(([key, value]) => `${key}=${value}`);
        const bySelectorFault: Fault = {
          ...base,
          mechanism: "unschedulable/node-selector",
          detail: `nodeSelector ${selector.join(", ")}; ${quoted}`,
          remedy: `Fix the nodeSelector of ${workload.ref} (${selector.join(", ")}) to labels a node has, or label a node to match`,
        };
        // A selector on kubernetes.io/hostname names a node by its name: one that lost the label is still the
        // node meant. Tainted against the pod as well, two faults keep it off; the scheduler names the taint.
        const meant = nodes.find((node) => node.metadata.name === pod.spec?.nodeSelector?.[HOSTNAME_LABEL]);
        const taints = meant === undefined ? [] : untolerated(pod, meant);
        return taints.length > 0 ? [taintFault(base, workload, taints, quoted), bySelectorFault] : [bySelectorFault];
      }
      return [
        {
          ...base,
          mechanism: "unschedulable/node-affinity",
          detail: `required node affinity; ${quoted}`,
          remedy: `Fix the required node affinity of ${workload.ref} to match a node's labels, or make it preferred`,
        },
      ];
    }
    case "taint": {
      const taints = [
        ...new Set(
          (index.state.nodes ?? [])
            .filter((node) => node.spec?.unschedulable !== true && selectorAdmits(pod, node) && affinityAdmits(pod, node))
            .flatMap((node) => untolerated(pod, node)),
        ),
      ];
      // The node lifecycle's own taints (not-ready, unreachable, a pressure) are a node's condition: its fault, not the workload's.
      if (taints.length > 0 && taints.every((taint) => taint.startsWith("node.kubernetes.io/"))) return [];
      return [taintFault(base, workload, taints, quoted)];
    }
    case "cordoned": {
      const cordoned = (index.state.nodes ?? []).filter((node) => node.spec?.unschedulable === true).map((node) => node.metadata.name);
      const names = cordoned.length > 0 ? ` (${someOf(cordoned).join(", ")})` : "";
      return [
        {
          ...base,
          mechanism: "unschedulable/cordoned",
          detail: `nodes cordoned${names}; ${quoted}`,
          remedy: `Uncordon the nodes${names} (kubectl uncordon) so ${workload.ref} can be placed`,
        },
      ];
    }
    case "cpu":
    case "memory": {
      const requested = requestOf(pod, reason);
      return [
        {
          ...base,
          mechanism: `unschedulable/${reason}`,
          detail: `${reason} request ${requested ?? "?"}; ${quoted}`,
          remedy: `Lower the ${reason} request of ${workload.ref}${requested === undefined ? "" : ` (${requested})`} to what a node has free, or add capacity`,
        },
      ];
    }
    case "anti-affinity":
      return [
        {
          ...base,
          mechanism: "unschedulable/pod-anti-affinity",
          detail: quoted,
          remedy: `Relax the pod anti-affinity of ${workload.ref} (preferred instead of required, or another topology key), or add nodes`,
        },
      ];
    case "affinity":
      return [{ ...base, mechanism: "unschedulable/pod-affinity", detail: quoted, remedy: `Fix the pod affinity of ${workload.ref} to match running pods` }];
    case "volume":
      return volumeFaults(index, workload, pod, base, quoted);
    default:
      return [{ ...base, mechanism: "unschedulable/other", detail: quoted, remedy: `Read the scheduler's message for ${workload.ref} and fix what it names` }];
  }
}

/** The scheduler's latest word on a pod: its PodScheduled condition, else its latest FailedScheduling event. */
function schedulerMessage(index: ClusterIndex, pod: Pod): { text: string; onset?: Date } | undefined {
  const events = index.eventsAbout("Pod", pod.metadata.name).filter((event) => event.reason === "FailedScheduling" && event.message !== undefined);
  const latest = events.at(-1);
  const condition = pod.status?.conditions?.find((one) => one.type === "PodScheduled" && one.status === "False" && one.message !== undefined);
  const text = condition?.message ?? latest?.message;
  if (text === undefined) return undefined;
  const first = events[0];
  const onset = first === undefined ? (condition?.lastTransitionTime ? new Date(condition.lastTransitionTime) : undefined) : eventOnset(first);
  return { text, ...(onset === undefined ? {} : { onset }) };
}

type SchedulingReason = "selector" | "taint" | "cordoned" | "cpu" | "memory" | "anti-affinity" | "affinity" | "volume" | "other";

const REASON_PATTERNS: ReadonlyArray<[RegExp, SchedulingReason]> = [
  [/didn't match pod's node affinity\/selector|node\(s\) didn't match node selector/i, "selector"],
  [/untolerated taint|taint.*didn't tolerate|had taint/i, "taint"],
  [/were unschedulable|node\(s\) unschedulable/i, "cordoned"],
  [/insufficient cpu/i, "cpu"],
  [/insufficient memory/i, "memory"],
  [/anti-affinity/i, "anti-affinity"],
  [/didn't match pod affinity/i, "affinity"],
  [/persistentvolumeclaim|volume node affinity|unbound immediate/i, "volume"],
];

/**
 * The reason that excludes the most nodes in "0/4 nodes are available: 1 node(s) were unschedulable, 3
 * Insufficient cpu. preemption: …" (the preemption part apart): a control-plane node a pod never runs on
 * is one node, the reason that stops it everywhere else is the rest. A message without counts ("pod has
 * unbound immediate PersistentVolumeClaims") is read whole.
 */
export function dominantReason(message: string): SchedulingReason {
  const head = message.split(/preemption:/i)[0] ?? message;
  const parts = (head.split(/are available:/i)[1] ?? head).split(/,|\./);
  let best: { reason: SchedulingReason; count: number } | undefined;
  for (const part of parts) {
    const reason = REASON_PATTERNS.find(([pattern]) => pattern.test(part))?.[1];
    if (reason === undefined) continue;
    const count = Number(/^\s*(\d+)/.exec(part)?.[1] ?? 0);
    // Of as many nodes, the reason other than a cordon: a cordoned control plane is how clusters are.
    if (best === undefined || count > best.count || (count === best.count && best.reason === "cordoned")) best = { reason, count };
  }
  return best?.reason ?? REASON_PATTERNS.find(([pattern]) => pattern.test(head))?.[1] ?? "other";
}

function firstSentence(text: string): string {
  return truncate(text.split(/ preemption:/i)[0] ?? text, 240);
}

/**
 * The reason read from the nodes themselves, when the state holds them: the nodes the pod's node selector
 * and required node affinity admit are where it wants to run, so what keeps it off those is the fault
 * (none admitted: the selector or the affinity; all cordoned: the cordon; the rest tainted against it: the
 * taint), whatever the scheduler counts for the nodes it was never meant for. Undefined when the nodes do
 * not decide it (resources, pod affinity, volumes: the scheduler's message says).
 */
function placementReason(index: ClusterIndex, pod: Pod): SchedulingReason | undefined {
  const nodes = index.state.nodes ?? [];
  if (nodes.length === 0 || nodes.every((node) => node.metadata.labels === undefined)) return undefined;
  // A control plane that is cordoned or tainted is how clusters keep workloads off it, not where this one was meant to run.
  const workers = nodes.filter((node) => !(isControlPlane(node) && (node.spec?.unschedulable === true || (node.spec?.taints ?? []).length > 0)));
  const admitted = workers.filter((node) => selectorAdmits(pod, node) && affinityAdmits(pod, node));
  if (admitted.length === 0) return "selector";
  const open = admitted.filter((node) => node.spec?.unschedulable !== true);
  if (open.length === 0) return "cordoned";
  if (open.every((node) => untolerated(pod, node).length > 0)) return "taint";
  return undefined;
}

/** The label every node carries with its own name. */
const HOSTNAME_LABEL = "kubernetes.io/hostname";

/** A workload kept off the nodes meant for it by their taints, which it does not tolerate. */
function taintFault(base: Base, workload: Workload, taints: readonly string[], quoted: string): Fault {
  return {
    ...base,
    mechanism: "unschedulable/taint",
    detail: `${taints.length === 0 ? "" : `untolerated taints ${someOf(taints).join(", ")}; `}${quoted}`,
    remedy: `Add the toleration ${workload.ref} needs for the nodes' taint, or remove the taint from the node it should run on`,
  };
}

function isControlPlane(node: Node): boolean {
  const labels = node.metadata.labels ?? {};
  return "node-role.kubernetes.io/control-plane" in labels || "node-role.kubernetes.io/master" in labels || labels["kubernetes.io/role"] === "master";
}

function selectorAdmits(pod: Pod, node: Node): boolean {
  return Object.entries(pod.spec?.nodeSelector ?? {}).every(([key, value]) => node.metadata.labels?.[key] === value);
}

/** Whether a node meets the pod's required node affinity: any of its terms, each of a term's expressions. */
function affinityAdmits(pod: Pod, node: Node): boolean {
  const terms = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  if (terms.length === 0) return true;
  const labels = node.metadata.labels ?? {};
  return terms.some((term) => (term.matchExpressions ?? []).every((expression) => expressionHolds(expression, labels[expression.key])));
}

function expressionHolds(expression: { operator: string; values?: string[] | undefined }, value: string | undefined): boolean {
  const values = expression.values ?? [];
  switch (expression.operator) {
    case "In":
      return value !== undefined && values.includes(value);
    case "NotIn":
      return value === undefined || !values.includes(value);
    case "Exists":
      return value !== undefined;
    case "DoesNotExist":
      return value === undefined;
    case "Gt":
      return value !== undefined && Number(value) > Number(values[0]);
    case "Lt":
      return value !== undefined && Number(value) < Number(values[0]);
    default:
      return true;
  }
}

/** The node's scheduling taints the pod does not tolerate (a cordon's own taint is the cordon, not counted). */
function untolerated(pod: Pod, node: Node): string[] {
  const tolerations = pod.spec?.tolerations ?? [];
  return (node.spec?.taints ?? [])
    .filter((taint) => (taint.effect === "NoSchedule" || taint.effect === "NoExecute") && taint.key !== "node.kubernetes.io/unschedulable")
    .filter(
      (taint) =>
        !tolerations.some(
          (toleration) =>
            (toleration.effect === undefined || toleration.effect === "" || toleration.effect === taint.effect) &&
            (toleration.operator === "Exists"
              ? toleration.key === undefined || toleration.key === "" || toleration.key === taint.key
              : toleration.key === taint.key && (toleration.value ?? "") === (taint.value ?? "")),
        ),
    )
    .map((taint) => `${taint.key}${taint.value === undefined ? "" : `=${taint.value}`}:${taint.effect}`);
}

function requestOf(pod: Pod, resource: "cpu" | "memory"): string | undefined {
  const requests = (pod.spec?.containers ?? []).flatMap((container) => {
    const value = container.resources?.requests?.[resource];
    return value === undefined ? [] : [value];
  });
  return requests.length === 1 ? requests[0] : requests.length > 1 ? requests.join(" + ") : undefined;
}

/** Pods Pending with no word from any scheduler: none is running (or none serves their schedulerName). */
function unscheduled(index: ClusterIndex, workload: Workload, pod: Pod, affects: string[]): Fault[] {
  const created = pod.metadata.creationTimestamp === undefined ? undefined : Date.parse(pod.metadata.creationTimestamp);
  // A pod seconds old may simply not have been looked at yet.
  if (created !== undefined && index.now - created < 20_000) return [];
  const schedulerName = pod.spec?.schedulerName;
  if (schedulerName !== undefined && schedulerName !== "default-scheduler") {
    return [
      {
        subject: workload.ref,
        mechanism: "unschedulable/no-scheduler",
        detail: `schedulerName ${schedulerName}: no event from any scheduler`,
        remedy: `Set schedulerName of ${workload.ref} to a scheduler that runs, or start ${schedulerName}`,
        certainty: "suggestive",
        affects,
      },
    ];
  }
  const host = schedulerNode(index);
  return [
    {
      subject: host === undefined ? "namespace/kube-system" : `node/${host}`,
      mechanism: "node/scheduler",
      detail: `${affects.join(", ")} Pending with no node and no event from the scheduler`,
      remedy: `Restart kube-scheduler${host === undefined ? "" : ` on ${host}`} and check its logs`,
      certainty: "suggestive",
      affects,
    },
  ];
}

/** The node the scheduler runs on: its kube-system pod's, else the control plane's. */
function schedulerNode(index: ClusterIndex): string | undefined {
  const pod = (index.state.systemPods ?? []).find(
    (one) => one.metadata.labels?.component === "kube-scheduler" || one.metadata.name.startsWith("kube-scheduler"),
  );
  if (pod?.spec?.nodeName !== undefined) return pod.spec.nodeName;
  const nodes = index.state.nodes ?? [];
  const controlPlane = nodes.find(isControlPlane);
  return controlPlane?.metadata.name ?? nodes.find((node) => /master|control/.test(node.metadata.name))?.metadata.name;
}

type Base = Pick<Fault, "subject" | "affects" | "certainty" | "onset">;

/**
 * An unbound claim of the pod, read against the volumes: the volume that would fit but for one thing
 * names the mechanism (bound to another claim, another class, too small, another access mode, labels its
 * selector does not match).
 */
function volumeFaults(index: ClusterIndex, workload: Workload, pod: Pod, base: Base, quoted: string): Fault[] {
  const claims = (pod.spec?.volumes ?? []).flatMap((volume) => (volume.persistentVolumeClaim === undefined ? [] : [volume.persistentVolumeClaim.claimName]));
  const known = index.state.persistentVolumeClaims ?? [];
  for (const name of claims) {
    const claim = known.find((one) => one.metadata.name === name);
    if (claim === undefined) {
      if (index.state.persistentVolumeClaims === undefined) continue;
      return [
        {
          ...base,
          mechanism: "volume/missing-claim",
          detail: `claim ${name} does not exist; ${quoted}`,
          remedy: `Create the PersistentVolumeClaim ${name} in ${index.namespace}, or fix ${workload.ref}'s volume`,
        },
      ];
    }
    if (claim.status?.phase === "Bound") continue;
    const mismatch = closestMismatch(claim, index.state.persistentVolumes ?? []);
    const events = index.eventsAbout("PersistentVolumeClaim", name).filter((event) => event.message !== undefined);
    const said = events.at(-1)?.message;
    const detail = `claim ${name} Pending${mismatch === undefined ? "" : `: ${mismatch.detail}`}${said === undefined ? "" : `; "${said}"`}`;
    const mechanism = mismatch?.mechanism ?? mechanismOfClaimMessage(said) ?? "volume/unbound";
    // Dated by the claim's first event, else as the pod's scheduling was.
    const onset = (events[0] === undefined ? undefined : eventOnset(events[0])) ?? base.onset;
    return [{ ...base, ...(onset === undefined ? {} : { onset }), mechanism, detail, remedy: volumeRemedy(mechanism, name, workload.ref, mismatch?.volume) }];
  }
  return [
    {
      ...base,
      mechanism: "volume/unbound",
      detail: quoted,
      remedy: `Bind the claims ${workload.ref} needs (a matching PersistentVolume or a storage class that provisions one)`,
    },
  ];
}

function mechanismOfClaimMessage(message: string | undefined): string | undefined {
  if (message === undefined) return undefined;
  if (/already bound to a different claim/i.test(message)) return "volume/pv-occupied";
  if (/storageclass.*(not found|does not match)|storageClassName does not match/i.test(message)) return "volume/storage-class";
  if (/too small|capacity/i.test(message)) return "volume/capacity";
  if (/access ?mode/i.test(message)) return "volume/access-mode";
  return undefined;
}

function volumeRemedy(mechanism: string, claim: string, workload: string, volume: string | undefined): string {
  const pv = volume === undefined ? "a PersistentVolume" : `the PersistentVolume ${volume}`;
  switch (mechanism) {
    case "volume/pv-occupied":
      return `Give claim ${claim} of ${workload} a volume of its own: ${pv} is bound to another claim`;
    case "volume/storage-class":
      return `Set the storageClassName of claim ${claim} to the class ${pv} has (or provision one of its class)`;
    case "volume/capacity":
      return `Request no more than ${pv} holds in claim ${claim}, or provide a larger volume`;
    case "volume/access-mode":
      return `Ask for an access mode ${pv} offers in claim ${claim}, or provide a volume with that mode`;
    case "volume/selector":
      return `Fix the selector of claim ${claim} to match ${pv}'s labels`;
    default:
      return `Bind claim ${claim} of ${workload}: provide a matching PersistentVolume or a storage class that provisions one`;
  }
}

/** The volume that would fit the claim with the fewest mismatches, and its first one; undefined when none is near. */
function closestMismatch(
  claim: PersistentVolumeClaim,
  volumes: readonly PersistentVolume[],
): { mechanism: string; detail: string; volume: string } | undefined {
  let best: { mismatches: Array<{ mechanism: string; detail: string }>; volume: string } | undefined;
  for (const volume of volumes) {
    const mismatches = mismatchesOf(claim, volume);
    if (mismatches.length === 0) continue;
    if (best === undefined || mismatches.length < best.mismatches.length) best = { mismatches, volume: volume.metadata.name };
  }
  const first = best?.mismatches[0];
  return first === undefined || best === undefined ? undefined : { ...first, volume: best.volume };
}

function mismatchesOf(claim: PersistentVolumeClaim, volume: PersistentVolume): Array<{ mechanism: string; detail: string }> {
  const found: Array<{ mechanism: string; detail: string }> = [];
  const name = volume.metadata.name;
  const claimRef = volume.spec?.claimRef;
  const boundElsewhere = volume.status?.phase === "Bound" && claimRef?.name !== undefined && claimRef.name !== claim.metadata.name;
  if (boundElsewhere)
    found.push({
      mechanism: "volume/pv-occupied",
      detail: `volume ${name} is bound to ${claimRef?.namespace === undefined ? "" : `${claimRef.namespace}/`}${claimRef?.name}`,
    });
  const wantedClass = claim.spec?.storageClassName ?? "";
  const hasClass = volume.spec?.storageClassName ?? "";
  if (wantedClass !== hasClass) found.push({ mechanism: "volume/storage-class", detail: `claim asks class "${wantedClass}", volume ${name} is "${hasClass}"` });
  const wanted = quantityOf(claim.spec?.resources?.requests?.storage);
  const has = quantityOf(volume.spec?.capacity?.storage);
  if (wanted !== undefined && has !== undefined && wanted > has)
    found.push({
      mechanism: "volume/capacity",
      detail: `claim asks ${claim.spec?.resources?.requests?.storage}, volume ${name} holds ${volume.spec?.capacity?.storage}`,
    });
  const modes = claim.spec?.accessModes ?? [];
  const offered = volume.spec?.accessModes ?? [];
  if (modes.length > 0 && offered.length > 0 && !modes.every((mode) => offered.includes(mode)))
    found.push({ mechanism: "volume/access-mode", detail: `claim asks ${modes.join(", ")}, volume ${name} offers ${offered.join(", ")}` });
  const selector = claim.spec?.selector?.matchLabels;
  if (selector !== undefined && Object.entries(selector).some(([key, value]) => volume.metadata.labels?.[key] !== value)) {
    found.push({
      mechanism: "volume/selector",
      detail: `claim selects ${Object.entries(selector)
        .map(([key, value]) => `${key}=${value}`)
        .join(", ")}, volume ${name} is not labelled so`,
    });
  }
  // A volume bound elsewhere is occupied whatever else differs: that is what stands in the way first.
  return boundElsewhere ? found.slice(0, 1) : found;
}
