import type { KubernetesEvent } from "@pes/contracts";
import type { ChangeEvidence } from "./evidence.js";

/**
 * Releases as the cluster's events tell them, for a playbook that reads events but not rollouts (or a
 * cluster whose events outlive the ReplicaSets it garbage-collects): the deployment controller scaling up
 * a new ReplicaSet, and the kubelet pulling a new image for a workload's pods. A release seen this way is
 * a `deploy` change like any other, so the ranking weighs it as a cause.
 */

/** The kubelet pulling an image onto a node: `Pulling image "…"`, `Successfully pulled image "…" in 1.2s (…)`. */
const IMAGE_PULL = /^(?:Pulling image|Successfully pulled image) "([^"]+)"/;
/** The kubelet starting a container whose image the node already had: no pull, no release. */
const ALREADY_PRESENT = /^Container image "([^"]+)" already present on machine/;
/**
 * The deployment controller: `Scaled up replica set checkout-7d9f8c6b5 to 1`, with `from 0` since
 * Kubernetes 1.26 (`… to 1 from 0`); `Scaled down …` for the ReplicaSet it replaces.
 */
const SCALED = /^Scaled (up|down) replica set (\S+) to (\d+)(?: from (\d+))?/;

/** The characters Kubernetes writes generated name suffixes and pod-template hashes with (no vowels, no 0, 1, 3). */
const SAFE = "[bcdfghjklmnpqrstvwxz2456789]";
/** A Deployment's pod: `<deployment>-<pod-template hash>-<5 characters>`. */
const REPLICA_SET_POD = new RegExp(`^(.+)-(${SAFE}{1,10})-${SAFE}{5}$`);
/** A StatefulSet's pod: `<statefulset>-<ordinal>`. */
const STATEFUL_SET_POD = /^(.+)-\d+$/;
/** A DaemonSet's or a Job's pod: `<owner>-<5 characters>`. */
const OWNED_POD = new RegExp(`^(.+)-${SAFE}{5}$`);

/** An event that happened in the window, dated when it began. */
export interface DatedEvent {
  event: KubernetesEvent;
  began: Date;
}

/** The releases the events tell, and the events they were read from (so that they are not also listed as events). */
export interface EventReleases {
  changes: ChangeEvidence[];
  used: ReadonlySet<KubernetesEvent>;
}

interface Release {
  /** The Deployment (or other workload) released: the change's subject, as a rollout names it. */
  workload: string;
  at: Date;
  images: string[];
  pods: string[];
  events: KubernetesEvent[];
}

/**
 * The releases the events of a window tell, the latest first:
 *
 * - a Deployment scaling up a ReplicaSet from 0 (a new revision, or a roll back to an old one), or, as
 *   Kubernetes before 1.26 words it without `from`, scaling one up whose pods pulled their image or while
 *   it scaled another one down: a deploy of the Deployment at the scale-up, of the images its pods pulled;
 * - pods of one workload pulling an image (by their ReplicaSet when their names say it, else by image):
 *   a deploy of that image at the first pull, unless a pod of the workload already ran it earlier in the
 *   window (a pod moved to another node pulls the image its siblings run: that is no release).
 *
 * Each names the pods it reached, and is a release only when it replaced something (hasPrevious). The workload of a pod is its ReplicaSet's Deployment when a scale-up
 * names that ReplicaSet, else what its generated name says (`checkout-7d9f8c6b5-x2k4p` → `checkout`).
 */
export function eventReleases(events: readonly DatedEvent[], cited: { action: string; link?: string }): EventReleases {
  const ordered = [...events].sort((a, b) => a.began.getTime() - b.began.getTime());
  const scaled = ordered.flatMap(({ event, began }) => {
    const match = event.reason === "ScalingReplicaSet" && event.involvedObject.kind === "Deployment" ? SCALED.exec(event.message ?? "") : null;
    const deployment = event.involvedObject.name;
    if (match === null || deployment === undefined) return [];
    const [, direction, replicaSet = "", , from] = match;
    return [{ event, began, deployment, replicaSet, up: direction === "up", fromZero: from === undefined ? undefined : from === "0" }];
  });
  const deploymentOf = new Map(scaled.map(({ replicaSet, deployment }) => [replicaSet, deployment]));
  const pulls = ordered.flatMap(({ event, began }) => {
    const pod = podName(event);
    const image = pod === undefined ? undefined : IMAGE_PULL.exec(event.message ?? "")?.[1];
    return pod === undefined || image === undefined ? [] : [{ event, began, pod, image, owner: ownerOf(pod, deploymentOf) }];
  });
  const present = ordered.flatMap(({ event, began }) => {
    const pod = podName(event);
    const image = pod === undefined ? undefined : ALREADY_PRESENT.exec(event.message ?? "")?.[1];
    return pod === undefined || image === undefined ? [] : [{ began, image, workload: ownerOf(pod, deploymentOf).workload }];
  });

  const releases = new Map<string, Release>();
  const add = (key: string, workload: string, at: Date, event: KubernetesEvent) => {
    const release = releases.get(key) ?? { workload, at, images: [], pods: [], events: [] };
    if (at < release.at) release.at = at;
    release.events.push(event);
    releases.set(key, release);
    return release;
  };
  // Scale-ups of a new revision (from 0), and, in the older wording, those whose pods pulled or that
  // replaced another of the Deployment's ReplicaSets.
  for (const scale of scaled.filter(({ up }) => up)) {
    const replacing = scaled.some((other) => !other.up && other.deployment === scale.deployment && other.replicaSet !== scale.replicaSet);
    const pulled = pulls.some(({ owner }) => owner.replicaSet === scale.replicaSet);
    if (scale.fromZero === false || (scale.fromZero === undefined && !replacing && !pulled)) continue;
    add(`rs/${scale.replicaSet}`, scale.deployment, scale.began, scale.event);
  }
  for (const pull of pulls) {
    const key = pull.owner.replicaSet === undefined ? `image/${pull.owner.workload}/${pull.image}` : `rs/${pull.owner.replicaSet}`;
    // A pull of an image a pod of the workload ran before it: a pod rescheduled, not a release.
    if (!releases.has(key) && present.some(({ workload, image, began }) => workload === pull.owner.workload && image === pull.image && began < pull.began))
      continue;
    const release = add(key, pull.owner.workload, pull.began, pull.event);
    if (!release.images.includes(pull.image)) release.images.push(pull.image);
    if (!release.pods.includes(pull.pod)) release.pods.push(pull.pod);
  }

  // What else of each workload the events show: its other ReplicaSets, the images its pods ran.
  const seen = [
    ...scaled.map(({ deployment, replicaSet, began }) => ({ workload: deployment, replicaSet, image: undefined, began })),
    ...pulls.map(({ owner, image, began }) => ({ workload: owner.workload, replicaSet: owner.replicaSet, image, began })),
    ...present.map(({ workload, image, began }) => ({ workload, replicaSet: undefined, image, began })),
  ];
  const found = [...releases.entries()]
    .filter(([key, release]) => hasPrevious(key, release, seen))
    .map(([, release]) => release)
    .sort((a, b) => b.at.getTime() - a.at.getTime());
  return {
    changes: found.map((release) => ({
      kind: "change",
      ...cited,
      change: "deploy",
      subject: release.workload,
      ...(release.images.length === 0 ? {} : { detail: release.images.map(shortImage).join(", ") }),
      at: release.at,
      ...(release.pods.length === 0 ? {} : { pods: release.pods.map((pod) => `pod/${pod}`) }),
    })),
    used: new Set(found.flatMap(({ events: used }) => used)),
  };
}

/**
 * Whether a release replaced something that a roll back would return to: another ReplicaSet of its
 * Deployment (scaled, or running pods), or another image its workload's pods ran before it. A workload's
 * first ReplicaSet (its creation), a bare pod's first pull, or pulls of an image nothing else preceded,
 * replaced nothing: they are no change that can be undone, so never a cause (a pull that fails is the
 * pod's symptom, read from its warning).
 */
function hasPrevious(
  key: string,
  release: Release,
  seen: ReadonlyArray<{ workload: string; replicaSet: string | undefined; image: string | undefined; began: Date }>,
): boolean {
  const replicaSet = key.startsWith("rs/") ? key.slice("rs/".length) : undefined;
  return seen.some(
    (other) =>
      other.workload === release.workload &&
      ((replicaSet !== undefined && other.replicaSet !== undefined && other.replicaSet !== replicaSet) ||
        (other.image !== undefined && !release.images.includes(other.image) && other.began < release.at)),
  );
}

function podName(event: KubernetesEvent): string | undefined {
  return event.involvedObject.kind === "Pod" ? event.involvedObject.name : undefined;
}

/** The workload a pod belongs to, and its ReplicaSet when it is a Deployment's (see eventReleases). */
function ownerOf(pod: string, deploymentOf: ReadonlyMap<string, string>): { workload: string; replicaSet?: string } {
  for (const [replicaSet, deployment] of deploymentOf) {
    if (pod.startsWith(`${replicaSet}-`) && pod.length === replicaSet.length + 6) return { workload: deployment, replicaSet };
  }
  const replicaSetPod = REPLICA_SET_POD.exec(pod);
  if (replicaSetPod !== null) return { workload: replicaSetPod[1] ?? pod, replicaSet: `${replicaSetPod[1] ?? ""}-${replicaSetPod[2] ?? ""}` };
  return { workload: STATEFUL_SET_POD.exec(pod)?.[1] ?? OWNED_POD.exec(pod)?.[1] ?? pod };
}

/** An image without its registry and repository path: `checkout:v1.42` for `registry.example/shop/checkout:v1.42`. */
export function shortImage(image: string): string {
  const digest = image.indexOf("@");
  const path = digest === -1 ? image : image.slice(0, digest);
  const short = path.slice(path.lastIndexOf("/") + 1);
  return digest === -1 ? short : `${short}${image.slice(digest)}`;
}
