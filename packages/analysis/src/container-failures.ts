/**
 * Why a container could not be pulled or started, as the kubelet says it: an event's message (`Failed to
 * pull image "…": … pull access denied`, `Error: … exec: "wge": executable file not found in $PATH`) or a
 * container's waiting or terminated status. These are causes: nothing else runs until they are fixed, and
 * the message names the image, the command or the object at fault.
 */

/** The cause kinds read from a pull or a start that failed. A later version may tell more apart. */
export type ContainerFailureKind =
  | "image-pull/not-found"
  | "image-pull/unauthorized"
  | "image-pull/dns"
  | "image-pull/failed"
  | "start/command-not-found"
  | "start/config"
  | "start/failed"
  | "unschedulable";

/** The kubelet pulling an image and failing, with why (`Failed to pull image "…": …`; in a waiting status, `failed to pull and unpack image …`). */
const PULL_FAILED = /\bfailed to pull (?:and unpack )?image\b/i;
/**
 * Why a pull failed, first match wins: the registry's name does not resolve; the registry wants
 * credentials (it would not even hand out an anonymous token, or answered 401); the reference names
 * nothing (NotFound, the words Docker Hub adds to it, "pull access denied, repository does not exist or
 * may require authorization", or a bare 403 on the manifest, which is how registries and their mirrors
 * answer for a repository they do not hold); any other denial.
 */
const PULL_CAUSES: ReadonlyArray<[RegExp, ContainerFailureKind]> = [
  [/\bno such host\b|\blookup \S+ on \S+|server misbehaving|name resolution|could not resolve host|network is unreachable/i, "image-pull/dns"],
  [/failed to authorize|no basic auth credentials|authentication required|\b401\b|unauthorized/i, "image-pull/unauthorized"],
  [
    /repository does not exist|pull access denied|manifest unknown|\bnot found\b|NotFound|\b404\b|\b403\b|forbidden|invalid reference format/i,
    "image-pull/not-found",
  ],
  [/denied/i, "image-pull/unauthorized"],
];

/**
 * Why a pull failed, from the runtime's message (an event's `Failed to pull image …` or a waiting
 * status'); a name that is no image's reference (`InvalidImageName`) names nothing.
 */
export function pullFailureKind(reason: string, message: string): ContainerFailureKind {
  if (reason === "InvalidImageName") return "image-pull/not-found";
  return PULL_CAUSES.find(([pattern]) => pattern.test(message))?.[1] ?? "image-pull/failed";
}

/** The runtime could not start the container's process: its command is not in the image. */
const COMMAND_NOT_FOUND = /executable file not found|exec: "[^"]*": (?:stat [^:]+: )?no such file or directory|exec format error/i;
/** What the kubelet could not put in place before starting it: a ConfigMap, a Secret, a key of them. */
const CONFIG_MISSING = /(?:configmap|secret) "[^"]+" not found|couldn't find key \S+ in (?:ConfigMap|Secret)/i;
/** The container was created and its start failed otherwise. */
const START_FAILED = /failed to (?:create|start) (?:containerd task|shim task|container)|OCI runtime create failed|StartError|RunContainerError/i;
const CONFIG_REASONS = new Set(["CreateContainerConfigError"]);
const START_REASONS = new Set(["StartError", "RunContainerError", "CreateContainerError"]);

/**
 * The failure an event (its reason and message) or a container's state (its waiting or terminated reason
 * and message) tells, when it says why; undefined for words that only say that it failed ("Error:
 * ErrImagePull", "Back-off pulling image …"): those are the same failure seen again, a symptom.
 */
export function failureKindOf(reason: string, message: string | undefined): ContainerFailureKind | undefined {
  const text = message ?? "";
  if (reason === "Unschedulable") return "unschedulable";
  if (PULL_FAILED.test(text) || reason === "InvalidImageName") return pullFailureKind(reason, text);
  if (COMMAND_NOT_FOUND.test(text)) return "start/command-not-found";
  if (CONFIG_MISSING.test(text) || CONFIG_REASONS.has(reason)) return "start/config";
  if (START_FAILED.test(text) || START_REASONS.has(reason)) return "start/failed";
  return undefined;
}
