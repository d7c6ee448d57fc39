import type { RuledOutChange } from "@pes/contracts";
import type {
  AlertEvidence,
  ChangeEvidence,
  EventEvidence,
  Evidence,
  FailedEvidence,
  FaultEvidence,
  LogPatternEvidence,
  MetricEvidence,
  NoDataEvidence,
  NoneEvidence,
  SkippedEvidence,
  SymptomEvidence,
} from "./evidence.js";
import { isBlip } from "./blips.js";
import { alertUpstream, isPage, namingTexts, upstreamsNamedIn, type IssueScope } from "./dependencies.js";
import { failureKindOf } from "./container-failures.js";
import { isCrashLoopEvent } from "./kubernetes-events.js";
import { isSlowdown, latencyOrigin, type OriginContext } from "./latency-origin.js";
import { nodeCause } from "./placement.js";
import { serviceGraphOf, type ServiceGraph } from "./service-graph.js";
import { labelKey } from "./series.js";

/** One action's evidence, with the (templated) title of the gadget it belongs to. */
export interface Finding<E extends Evidence = Evidence> {
  gadget: string;
  evidence: E;
  /**
   * The upstream service it is about: its gadget's instance (a gadget's `upstreams`), or an alert firing
   * for a declared upstream (dependencies.ts). Absent for the paged service's own findings.
   */
  upstream?: string;
}

/**
 * How long before the issue time a symptom may have begun and still be part of the incident (unless told
 * otherwise): one that began longer before it is background.
 */
export const CAUSE_LOOKBACK_MS = 30 * 60_000;

/**
 * How long a change may be followed by nothing abnormal and still be the likely cause of what came next.
 * Symptoms are dated when they began (a metric's change point), and a deploy's or a config change's
 * effect begins as its pods take traffic, within minutes: a change quiet for longer than this is not
 * the cause of what follows (a crawler's surge 19 minutes after a harmless deploy, a database filling
 * up 16 minutes after another service's rollout).
 */
export const CHANGE_EFFECT_MS = 10 * 60_000;

/**
 * How close two cause candidates may be (changes by when they happened, symptoms by when they began) and
 * still not be told apart: within it, which came first says little (rollouts take minutes, metrics are
 * dated to their scrape step), so both are named and neither is the cause alone.
 */
export const RIVAL_MS = 2 * 60_000;

/**
 * Kubernetes reasons that say a container or pod was taken down by its resources or kept failing, with
 * the kind of cause each is: when one comes first, it is a cause candidate rather than a consequence.
 */
const CAUSE_EVENT_KINDS: ReadonlyMap<string, "oom" | "crash-loop" | "eviction" | "node-not-ready" | "unschedulable"> = new Map([
  ["OOMKilled", "oom"],
  ["SystemOOM", "oom"],
  ["CrashLoopBackOff", "crash-loop"],
  ["Evicted", "eviction"],
  ["NodeNotReady", "node-not-ready"],
  ["FailedScheduling", "unschedulable"],
] as const);

/**
 * What a piece of evidence is for the bottom line: a `symptom` (abnormal, firing, a warning), a `change`
 * (a cause candidate), `normal` (compared with its baseline and within it, or looked for and not found:
 * `none`), an `answer` (context without a judgement: never counted as normal), or nothing checked:
 * `no-data`, `failed`, `skipped`.
 */
export type Role = "symptom" | "change" | "normal" | "answer" | "no-data" | "failed" | "skipped";

export interface RankOptions extends IssueScope {
  /** The issue time: symptoms without an onset are taken to begin at it. */
  time: Date;
  /** See CAUSE_LOOKBACK_MS; default 30 min. */
  lookbackMs?: number;
  /** See CHANGE_EFFECT_MS; default 10 min. */
  changeEffectMs?: number;
}

/**
 * The likely cause and why: `change` (a change at most CHANGE_EFFECT_MS before the first symptom) or
 * `symptom` (the earliest symptom of a cause's kind, with others at or after it): rankFindings' rules.
 */
export type LikelyCause = (
  | { basis: "change"; finding: Finding<ChangeEvidence> }
  /** A fault the cluster's state shows (rule 0): it needs no change before it. */
  | { basis: "fault"; finding: Finding<FaultEvidence> }
  | { basis: "symptom"; finding: Finding<SymptomEvidence> }
  /**
   * A node (placement.ts): `confined` are the symptoms only its pods show, `signals` what fires or warns
   * about the node itself, `finding` the earliest of them all.
   */
  | { basis: "node"; node: string; finding: Finding<SymptomEvidence>; confined: Array<Finding<SymptomEvidence>>; signals: Array<Finding<SymptomEvidence>> }
  /**
   * Where a slowdown of several services begins (latency-origin.ts): `slowed` is how many slowed;
   * `byGraph` when the service graph told it (its slowdown explains the others'), else it rose most.
   */
  | { basis: "latency"; finding: Finding<MetricEvidence>; slowed: number; byGraph: boolean }
) & {
  /** How long before the first symptom that followed it (or the issue time, if none is dated). */
  leadMs: number;
  /** The symptoms of the incident that followed it, strongest first; empty for a fault alone, or one the page alone followed. */
  followers: Array<Finding<SymptomEvidence>>;
  /**
   * Another candidate as likely by the same rule, within RIVAL_MS of it: a change of another subject, or
   * a symptom of a cause's kind found by another action. Absent when the rule names one alone.
   */
  rival?: Finding<ChangeEvidence> | Finding<SymptomEvidence>;
};

/**
 * Why a change is not the likely cause: the cause is a later change still before the first symptom
 * (`before-likely-cause`), it came after the first symptom (`after-first-symptom`), too long before it
 * (`long-before`), or nothing abnormal was found at all (`no-symptom`). The verdict's words for it.
 */
export type ChangeVerdict = RuledOutChange["why"];

export interface RankedChange extends Finding<ChangeEvidence> {
  verdict: ChangeVerdict;
  /** From the change to the first symptom (negative: after it); absent without a symptom. */
  leadMs?: number;
}

export interface Ranking {
  /** The symptoms of the incident, strongest first (measured severity; others after); ties keep playbook order. */
  symptoms: Array<Finding<SymptomEvidence>>;
  /**
   * What was abnormal, firing or a warning already more than the lookback before the issue time, and
   * warning events of a reason seen then too (recurring): reported, but background to the incident, never
   * its symptoms (same order as `symptoms`).
   */
  background: Array<Finding<SymptomEvidence>>;
  /** When the earliest dated symptoms of the incident began, and those symptoms (strongest first); none dated: undefined. */
  first?: { at: Date; symptoms: Array<Finding<SymptomEvidence>> };
  /** Only when there are symptoms, and rule 3 or 4 of rankFindings names one. */
  likelyCause?: LikelyCause;
  /**
   * The changes that are not the likely cause, earliest first, each with why not; ties keep playbook
   * order. A change that is the likely cause's rival is here too (`before-likely-cause`), though not
   * ruled out (ruledOutChanges).
   */
  changes: RankedChange[];
  /** Compared with their baseline and within normal variation, or nothing found, in playbook order. */
  normal: Array<Finding<MetricEvidence | LogPatternEvidence | NoneEvidence>>;
  /** Answers without a baseline (instant values, plain answers, events that are not warnings), in playbook order. */
  answers: Finding[];
  /**
   * The page: alerts firing for what the issue is about (isPage), found by an alert query. What the issue
   * already says, so context, never a symptom: with nothing else abnormal, nothing was found.
   */
  paged: Array<Finding<AlertEvidence>>;
  noData: Array<Finding<NoDataEvidence>>;
  failed: Array<Finding<FailedEvidence>>;
  skipped: Array<Finding<SkippedEvidence>>;
}

/** A piece of evidence with its role, typed by it: the one map from evidence kinds to roles. */
type Classified =
  | { role: "symptom"; evidence: SymptomEvidence }
  | { role: "change"; evidence: ChangeEvidence }
  | { role: "normal"; evidence: MetricEvidence | LogPatternEvidence | NoneEvidence }
  | { role: "answer"; evidence: Evidence }
  | { role: "no-data"; evidence: NoDataEvidence }
  | { role: "failed"; evidence: FailedEvidence }
  | { role: "skipped"; evidence: SkippedEvidence };

function classify(evidence: Evidence): Classified {
  switch (evidence.kind) {
    case "metric":
    case "log-pattern":
      return evidence.abnormal ? { role: "symptom", evidence } : { role: "normal", evidence };
    case "alert":
    case "fault":
      return { role: "symptom", evidence };
    case "event":
      return evidence.warning ? { role: "symptom", evidence } : { role: "answer", evidence };
    case "change":
      return { role: "change", evidence };
    case "none":
      return { role: "normal", evidence };
    case "values":
    case "answer":
    case "service-graph":
      return { role: "answer", evidence };
    case "no-data":
      return { role: "no-data", evidence };
    case "failed":
      return { role: "failed", evidence };
    case "skipped":
      return { role: "skipped", evidence };
  }
}

/** The role of a piece of evidence (see Role). */
export function roleOf(evidence: Evidence): Role {
  return classify(evidence).role;
}

/**
 * Ranks an execution's findings into a likely cause, by evidence, then by time. The rules (docs/investigations.md, "How
 * the analysis judges"):
 *
 * 0. A fault the cluster's state shows (a pod the scheduler cannot place, an image that cannot be pulled,
 *    a Service whose selector matches no pod: kubernetes-state-reading.ts) is the likely cause, whatever
 *    changed before it: the state names the mechanism itself. A decisive one (the state says so itself)
 *    before a suggestive one; another of the same certainty, of another object or mechanism, is its rival.
 * 1. Symptoms are abnormal metrics and log patterns, firing alerts, warning events and faults, strongest
 *    first; the page (an alert firing for what the issue is about) is context, not a symptom.
 *    One without an onset is taken to begin at the issue time. One that began more than the lookback
 *    before the issue time is background (but a metric's trend, a slow climb that runs into the
 *    incident phase, is the incident's however long ago it began), as is a warning event whose reason was seen then too
 *    (recurring): listed apart, never a symptom of the incident.
 * 2. No symptom, no cause: changes are listed with `no-symptom`.
 * 3. A change at most CHANGE_EFFECT_MS before the incident's first symptom is the likely cause (the
 *    latest such change). A change after the first symptom, or longer before it (followed by nothing
 *    abnormal for that long), is not. A change seen by several actions counts once (firstSightings).
 * 4. Otherwise the earliest symptom of a cause's kind (isCauseKind: a saturated metric, a metric fallen
 *    to zero such as a failing probe, an OOM kill, a crash loop, an eviction; an alert that fired before
 *    anything else, unless it is the page) or of an upstream that turned abnormal before the paged service
 *    (upstreamCandidates) is the likely cause, when other symptoms began with it or after it; of several
 *    at the same time, the strongest. A blip (isBlip: a move over within minutes) is none, nor a crash loop
 *    an OOM kill of the same container set off (oomStories: the kill is the cause, dated when the loop began). A first
 *    symptom of another kind (an error ratio, a latency) of the paged service is named as the place to
 *    look, not as the cause.
 *    When the metric symptoms a node label places are all confined to one node and something fires or
 *    warns about that node itself, the node is the likely cause (nodeCause) instead of none, an alert or
 *    an upstream (whose trouble would not spare the pods on the other nodes), but not instead of a symptom
 *    of another cause's kind (the node's memory at its limit).
 * 5. Another candidate within RIVAL_MS of the likely cause (a change of another subject by rule 3, a
 *    symptom of a cause's kind found by another action, or another upstream's, by rule 4) is its rival:
 *    both are as likely.
 * 6. With none of these, when the latencies of several services rose, the one that rose most against its
 *    own normal is where the slowdown likely begins (latencyOrigin): where, not why. Another that rose
 *    at least half as much is its rival.
 *
 * Deterministic: ties keep playbook order (the order of `findings`).
 */
export function rankFindings(findings: readonly Finding[], options: RankOptions): Ranking {
  const lookback = options.lookbackMs ?? CAUSE_LOOKBACK_MS;
  const changeEffect = options.changeEffectMs ?? CHANGE_EFFECT_MS;
  const time = options.time.getTime();
  const ranking: Ranking = { symptoms: [], background: [], changes: [], normal: [], answers: [], paged: [], noData: [], failed: [], skipped: [] };
  const changes: Array<Finding<ChangeEvidence>> = [];
  for (const finding of findings) {
    const { evidence } = finding;
    const upstream = finding.upstream ?? (evidence.kind === "alert" ? alertUpstream(evidence, options) : undefined);
    // Kept with every symptom: which service it is about decides whether it can be a cause (rule 4).
    const base = upstream === undefined ? { gadget: finding.gadget } : { gadget: finding.gadget, upstream };
    const classified = classify(evidence);
    switch (classified.role) {
      case "symptom": {
        const symptom = { ...base, evidence: classified.evidence };
        // The page (an alert for what the issue is about) is context, not a symptom.
        if (upstream === undefined && symptom.evidence.kind === "alert" && isPage(symptom.evidence, options.attributes))
          ranking.paged.push({ ...base, evidence: symptom.evidence });
        else ranking.symptoms.push(symptom);
        break;
      }
      case "change":
        changes.push({ ...base, evidence: classified.evidence });
        break;
      case "normal":
        ranking.normal.push({ ...base, evidence: classified.evidence });
        break;
      case "answer":
        ranking.answers.push(finding);
        break;
      case "no-data":
        ranking.noData.push({ ...base, evidence: classified.evidence });
        break;
      case "failed":
        ranking.failed.push({ ...base, evidence: classified.evidence });
        break;
      case "skipped":
        ranking.skipped.push({ ...base, evidence: classified.evidence });
        break;
    }
  }
  // Array.prototype.sort is stable: equal keys stay in playbook order.
  ranking.symptoms.sort((a, b) => compareNumbers(severityOf(b.evidence), severityOf(a.evidence)));
  changes.sort((a, b) => compareNumbers(a.evidence.at.getTime(), b.evidence.at.getTime()));
  const distinct = firstSightings(changes);

  const onsetOf = (symptom: Finding<SymptomEvidence>) => symptom.evidence.onset?.getTime() ?? time;
  const graph = serviceGraphOf(findings.map(({ evidence }) => evidence));
  // A slow climb still going into the incident phase is the incident's, however long ago it began.
  const early = ranking.symptoms.filter((symptom) => !isTrend(symptom.evidence) && onsetOf(symptom) < time - lookback);
  const recurring = new Set(early.flatMap(({ evidence }) => (evidence.kind === "event" ? [evidence.reason] : [])));
  ranking.background = ranking.symptoms.filter(
    (symptom) => early.includes(symptom) || (symptom.evidence.kind === "event" && recurring.has(symptom.evidence.reason)),
  );
  const stories = oomStories(ranking.symptoms.filter((symptom) => !ranking.background.includes(symptom)));
  ranking.symptoms = stories.symptoms;
  const incident = ranking.symptoms;
  const dated = incident.filter((symptom) => symptom.evidence.onset !== undefined);
  const earliest = Math.min(...dated.map(onsetOf));
  if (Number.isFinite(earliest)) ranking.first = { at: new Date(earliest), symptoms: dated.filter((symptom) => onsetOf(symptom) === earliest) };

  if (incident.length === 0) {
    ranking.changes = distinct.map((change) => ({ ...change, verdict: "no-symptom" }));
    return ranking;
  }
  const reference = ranking.first?.at.getTime() ?? time;
  const byFault = faultCause(incident, onsetOf);
  // The latest change in range; of several at that time, the first in playbook order.
  const inRange =
    byFault === undefined
      ? distinct.filter((change) => reference - change.evidence.at.getTime() >= 0 && reference - change.evidence.at.getTime() <= changeEffect)
      : [];
  const latest = Math.max(...inRange.map((change) => change.evidence.at.getTime()));
  const cause = inRange.find((change) => change.evidence.at.getTime() === latest);
  if (byFault !== undefined) {
    ranking.likelyCause = byFault;
  } else if (cause !== undefined) {
    // A change of another subject close to it is as likely: the rule cannot prefer the later one.
    const rival = inRange.find(
      (change) => change !== cause && latest - change.evidence.at.getTime() <= RIVAL_MS && change.evidence.subject !== cause.evidence.subject,
    );
    ranking.likelyCause = {
      basis: "change",
      finding: cause,
      leadMs: reference - cause.evidence.at.getTime(),
      followers: incident,
      ...(rival === undefined ? {} : { rival }),
    };
  } else {
    // A node says more than an alert that fired first or an upstream (which would slow the pods on every
    // node), and less than the node's resource at its limit (its memory full, a pod killed): that is what
    // made it slow.
    const bySymptom = symptomCause(incident, stories.crashLoops, ranking.paged, onsetOf, { ...options, ...(graph === undefined ? {} : { graph }) });
    const onNode = nodeCause(incident, onsetOf);
    const yields = bySymptom === undefined || bySymptom.finding.evidence.kind === "alert" || bySymptom.finding.upstream !== undefined;
    ranking.likelyCause =
      (onNode !== undefined && yields ? onNode : bySymptom) ??
      slowdownCause(incident, onsetOf, {
        ...(graph === undefined ? {} : { graph, named: namedServices(findings, graph) }),
        ...(options.attributes === undefined ? {} : { attributes: options.attributes }),
      });
  }
  ranking.changes = distinct
    .filter((change) => change !== cause)
    .map((change) => {
      const leadMs = reference - change.evidence.at.getTime();
      const verdict: ChangeVerdict = leadMs < 0 ? "after-first-symptom" : leadMs > changeEffect ? "long-before" : "before-likely-cause";
      return { ...change, verdict, leadMs };
    });
  return ranking;
}

/** The graph's services some metric finding is about, moved or not. */
function namedServices(findings: readonly Finding[], graph: ServiceGraph): Set<string> {
  const named = new Set<string>();
  for (const { evidence } of findings) {
    const service = evidence.kind === "metric" ? graph.serviceOf(evidence.labels) : undefined;
    if (service !== undefined) named.add(service);
  }
  return named;
}

/**
 * Rule 6 of rankFindings: with nothing of a cause's kind, where a slowdown of several services begins
 * (latencyOrigin), followed by the rest of the incident.
 */
function slowdownCause(
  incident: ReadonlyArray<Finding<SymptomEvidence>>,
  onsetOf: (symptom: Finding<SymptomEvidence>) => number,
  context: OriginContext,
): LikelyCause | undefined {
  const origin = latencyOrigin(incident, context);
  if (origin === undefined) return undefined;
  const { finding, slowed, byGraph, rival } = origin;
  const followers = incident.filter((symptom) => symptom !== finding && onsetOf(symptom) >= onsetOf(finding));
  const next = Math.min(...followers.map(onsetOf));
  return {
    basis: "latency",
    finding,
    slowed,
    byGraph,
    leadMs: Number.isFinite(next) ? next - onsetOf(finding) : 0,
    followers,
    ...(rival === undefined ? {} : { rival }),
  };
}

/**
 * Rule 0 of rankFindings: the first fault of the cluster's state, decisive ones first (the state reader
 * gives each object's faults root first), and another of the same certainty about another object or of
 * another mechanism as its rival.
 */
function faultCause(incident: ReadonlyArray<Finding<SymptomEvidence>>, onsetOf: (symptom: Finding<SymptomEvidence>) => number): LikelyCause | undefined {
  const faults = incident.filter((symptom): symptom is Finding<FaultEvidence> => symptom.evidence.kind === "fault");
  const decisive = faults.filter(({ evidence }) => evidence.certainty === "decisive");
  const pool = decisive.length > 0 ? decisive : faults;
  const [finding] = pool;
  if (finding === undefined) return undefined;
  const { subject, mechanism } = finding.evidence;
  const rival = pool.find(({ evidence }) => evidence.subject !== subject || evidence.mechanism !== mechanism);
  const followers = incident.filter((symptom) => symptom !== finding && symptom.evidence.kind !== "fault");
  const next = Math.min(...followers.map(onsetOf));
  return {
    basis: "fault",
    finding,
    leadMs: Number.isFinite(next) ? Math.max(0, next - onsetOf(finding)) : 0,
    followers,
    ...(rival === undefined ? {} : { rival }),
  };
}

/**
 * The changes, one per change: the same change seen by several actions (a rollout's new ReplicaSet and
 * its pods pulling the new image, a deploy tracker and the cluster) is one, and its first sighting stands
 * for it (sameChange). `changes` are in time order; so is what is returned.
 */
function firstSightings(changes: ReadonlyArray<Finding<ChangeEvidence>>): Array<Finding<ChangeEvidence>> {
  const kept: Array<Finding<ChangeEvidence>> = [];
  for (const change of changes) if (!kept.some((earlier) => sameChange(earlier.evidence, change.evidence))) kept.push(change);
  return kept;
}

/**
 * Whether two actions saw the same change: of the same kind and subject, within RIVAL_MS of each other
 * (what each dates it by, a ReplicaSet's creation or a pod's pull, is seconds apart), to versions that
 * agree (the same image, or a tag and an image of it: `v1.42` and `checkout:v1.42`) or with one unnamed.
 */
function sameChange(a: ChangeEvidence, b: ChangeEvidence): boolean {
  return (
    a.action !== b.action &&
    a.change === b.change &&
    a.subject === b.subject &&
    Math.abs(a.at.getTime() - b.at.getTime()) <= RIVAL_MS &&
    (a.detail === undefined || b.detail === undefined || versionsAgree(a.detail, b.detail))
  );
}

/** Whether two details name a version in common (each may list several images: `checkout:v1.42, envoy:1.29`). */
function versionsAgree(a: string, b: string): boolean {
  const versions = (detail: string) => detail.split(", ");
  return versions(a).some((one) => versions(b).some((other) => one === other || one.endsWith(`:${other}`) || other.endsWith(`:${one}`)));
}

/**
 * Rule 4 of rankFindings: the earliest symptom of a cause's kind, or of an upstream that turned abnormal
 * before the paged service (upstreamCandidates), when others began with it or after it.
 */
function symptomCause(
  incident: ReadonlyArray<Finding<SymptomEvidence>>,
  crashLoops: ReadonlySet<Finding<SymptomEvidence>>,
  paged: ReadonlyArray<Finding<AlertEvidence>>,
  onsetOf: (symptom: Finding<SymptomEvidence>) => number,
  scope: RankOptions & { graph?: ServiceGraph },
): LikelyCause | undefined {
  const first = Math.min(...incident.map(onsetOf));
  const upstream = upstreamCandidates(incident, onsetOf, scope);
  // An alert is a cause only when it fired before everything else: one that began with an error spike is
  // more likely about it. The page (an alert for what was paged) never is: it is what the issue says.
  // A blip (over within minutes) is never one: it does not explain an incident. One still going at the
  // issue time is what the issue reports, however soon it was over after.
  // A crash loop an OOM kill set off is the kill's consequence (oomStories), never a candidate of its own.
  const candidates = incident.filter(
    (symptom) =>
      (!isBlip(symptom.evidence) || spans(symptom.evidence, scope.time)) &&
      !crashLoops.has(symptom) &&
      !isSlowdownsStop(symptom, incident, onsetOf, scope.graph) &&
      (upstream.has(symptom) ||
        (symptom.upstream === undefined && isLeadingNewPattern(symptom, incident, onsetOf)) ||
        (symptom.upstream === undefined &&
          isCauseKind(symptom.evidence) &&
          (symptom.evidence.kind !== "alert" ||
            (!isPage(symptom.evidence, scope.attributes) && incident.every((other) => other === symptom || onsetOf(other) > first))))),
  );
  const earliest = Math.min(...candidates.map(onsetOf));
  // Symptoms are strongest first: of several at the same time, the strongest.
  const candidate = candidates.find((symptom) => onsetOf(symptom) === earliest);
  if (candidate === undefined) return undefined;
  const followers = incident.filter((symptom) => symptom !== candidate && onsetOf(symptom) >= earliest);
  // An upstream's other symptoms are the same trouble seen by another action, as is the crash loop an OOM
  // kill set off: the lead is to what followed them, when anything else did.
  const beyond = followers.filter((symptom) => candidate.upstream === undefined || symptom.upstream !== candidate.upstream);
  const further = beyond.filter((symptom) => !crashLoops.has(symptom));
  // The page is no symptom, but it is what followed when nothing else did: the trouble the issue reports.
  const pages = paged.map(onsetOf).filter((onset) => onset >= earliest);
  const next = Math.min(...(further.length > 0 ? further : beyond).map(onsetOf), ...(beyond.length === 0 ? pages : []));
  if (!Number.isFinite(next)) return undefined;
  // Another action's candidate that began close to it is as likely: what came first by a scrape step says
  // little. An upstream's own symptoms are one candidate, whichever of its actions showed them.
  // The same fault of the same object (a pod unschedulable, in its status and in its events) is one candidate too.
  const rival = candidates.find(
    (symptom) =>
      symptom.evidence.action !== candidate.evidence.action &&
      (symptom.upstream === undefined || symptom.upstream !== candidate.upstream) &&
      !sameFault(symptom.evidence, candidate.evidence) &&
      onsetOf(symptom) - earliest <= RIVAL_MS,
  );
  return { basis: "symptom", finding: candidate, leadMs: next - earliest, followers, ...(rival === undefined ? {} : { rival }) };
}

/**
 * An OOM kill and the crash loop of the same pod's container (the kubelet backing off restarting what the
 * kernel keeps killing: a pod's status and its events, by the same or by two actions) are one story: the
 * memory limit, then the crash loop. The crash loop is the kill's consequence, never a cause candidate
 * or its rival; the kill is dated when the story began, at the crash loop's onset when that came first
 * (a pod's status dates only its latest termination, and the kills had begun before the loop did).
 * Paired by the pod (`subject`), and by the container when both name it. Returns the symptoms in the same
 * order with those kills re-dated, and the crash loops so paired.
 */
function oomStories(symptoms: ReadonlyArray<Finding<SymptomEvidence>>): {
  symptoms: Array<Finding<SymptomEvidence>>;
  crashLoops: Set<Finding<SymptomEvidence>>;
} {
  const eventsOf = (kind: "oom" | "crash-loop") =>
    symptoms.flatMap((symptom) => (symptom.evidence.kind === "event" && causeKindOf(symptom.evidence) === kind ? [{ symptom, event: symptom.evidence }] : []));
  const loops = eventsOf("crash-loop");
  const crashLoops = new Set<Finding<SymptomEvidence>>();
  const redated = new Map<Finding<SymptomEvidence>, Finding<SymptomEvidence>>();
  for (const { symptom, event } of eventsOf("oom")) {
    const set = loops.filter((loop) => loop.symptom.upstream === symptom.upstream && sameContainer(event, loop.event));
    for (const loop of set) crashLoops.add(loop.symptom);
    const began = Math.min(...[event, ...set.map((loop) => loop.event)].flatMap(({ onset }) => (onset === undefined ? [] : [onset.getTime()])));
    if (Number.isFinite(began) && began < (event.onset?.getTime() ?? Number.POSITIVE_INFINITY)) {
      redated.set(symptom, { ...symptom, evidence: { ...event, onset: new Date(began) } });
    }
  }
  return { symptoms: symptoms.map((symptom) => redated.get(symptom) ?? symptom), crashLoops };
}

/**
 * Whether two symptoms are one fault: events about the same object, of the same cause's kind, or two
 * metrics of the same series' labels at their limits (a service's CPU at its limit and its throttling).
 */
function sameFault(a: SymptomEvidence, b: SymptomEvidence): boolean {
  if (a.kind === "metric" && b.kind === "metric") return a.saturation !== undefined && b.saturation !== undefined && labelKey(a.labels) === labelKey(b.labels);
  return a.kind === "event" && b.kind === "event" && a.subject === b.subject && causeKindOf(a) === causeKindOf(b);
}

/** Whether two events are about the same pod's container: the same pod, and the same container when both name one. */
function sameContainer(a: EventEvidence, b: EventEvidence): boolean {
  return a.subject.startsWith("pod/") && a.subject === b.subject && (a.container === undefined || b.container === undefined || a.container === b.container);
}

/**
 * The symptoms of upstreams that may be the paged service's cause: those that began before the paged
 * service's own first symptom, or with it when one of its own log patterns names the upstream (its
 * errors say that upstream failed them), and that the paged service's own symptoms followed. An upstream
 * that turned abnormal after the paged service is more likely its consequence, or unrelated.
 */
function upstreamCandidates(
  incident: ReadonlyArray<Finding<SymptomEvidence>>,
  onsetOf: (symptom: Finding<SymptomEvidence>) => number,
  scope: IssueScope,
): Set<Finding<SymptomEvidence>> {
  const own = incident.filter((symptom) => symptom.upstream === undefined);
  const ownFirst = Math.min(...own.map(onsetOf));
  if (!Number.isFinite(ownFirst)) return new Set();
  const named = new Set(own.flatMap(({ evidence }) => namingTexts(evidence).flatMap((text) => upstreamsNamedIn(text, scope.upstreams ?? []))));
  return new Set(
    incident.filter(
      (symptom) => symptom.upstream !== undefined && (onsetOf(symptom) < ownFirst || (onsetOf(symptom) === ownFirst && named.has(symptom.upstream))),
    ),
  );
}

/**
 * Whether a symptom is of a kind that takes a service down rather than one that shows it is down: a
 * resource at its limit (saturation: connections at max_connections, a disk free of nothing), a metric
 * fallen to zero (a probe failing, a target down; not one the playbook says saturates upward), a pod killed or kept from running, an alert
 * (its condition held before it fired). Error ratios, latencies and log patterns show harm; they do not
 * say where it came from.
 */
export function isCauseKind(evidence: SymptomEvidence): boolean {
  return causeKindOf(evidence) !== undefined;
}

/** The kind of cause a symptom is (see isCauseKind), in the verdict's words; undefined for one of no cause's kind. */
export function causeKindOf(evidence: SymptomEvidence): string | undefined {
  switch (evidence.kind) {
    case "metric":
      if (evidence.saturation !== undefined) return "saturation";
      // Not for one the playbook says saturates upward: CPU or throttling at zero is relief.
      return evidence.value === 0 && evidence.baseline > 0 && evidence.saturates !== "up" ? "outage" : undefined;
    case "event":
      // A pull or a start that failed, when the kubelet says why (container-failures.ts).
      return (
        CAUSE_EVENT_KINDS.get(evidence.reason) ?? (isCrashLoopEvent(evidence) ? "crash-loop" : undefined) ?? failureKindOf(evidence.reason, evidence.message)
      );
    case "alert":
      return "alert";
    case "fault":
      return evidence.mechanism;
    case "log-pattern":
      return undefined;
  }
}

/**
 * A log pattern new in the incident (none of it in the baseline: "connection pool exhausted") that began
 * before every other action's symptom: what the service said first may be why the rest followed. One
 * that grew from a baseline, or began with the other symptoms, shows harm like an error ratio does.
 */
function isLeadingNewPattern(
  symptom: Finding<SymptomEvidence>,
  incident: ReadonlyArray<Finding<SymptomEvidence>>,
  onsetOf: (symptom: Finding<SymptomEvidence>) => number,
): boolean {
  const { evidence } = symptom;
  if (evidence.kind !== "log-pattern" || evidence.total === true || evidence.baselinePerMinute !== 0 || evidence.onset === undefined) return false;
  const began = onsetOf(symptom);
  // A pattern naming what another symptom of a cause's kind is about (a dependency's probe failing, and the
  // errors calling it) is that symptom seen in the logs: it leads only by when lines and scrapes fall.
  const text = `${evidence.pattern} ${evidence.example ?? ""}`;
  const namesAnother = incident.some(
    (other) =>
      other !== symptom &&
      isCauseKind(other.evidence) &&
      other.evidence.kind === "metric" &&
      Object.values(other.evidence.labels).some((value) => value.length >= 4 && text.includes(value)),
  );
  return !namesAnother && incident.every((other) => other.evidence.action === evidence.action || onsetOf(other) > began);
}

/**
 * Whether a metric fallen to zero (requests served, bytes received) is a slowdown seen again: a latency
 * rose as it stopped (within RIVAL_MS) or before, either the same service's (requests that do not finish
 * are not counted) or, by the service graph, a caller's (a caller stuck on something else sends it
 * nothing; its own outage would have come first, and alone). The slowdown says more (rule 6) than an
 * outage would.
 */
function isSlowdownsStop(
  symptom: Finding<SymptomEvidence>,
  incident: ReadonlyArray<Finding<SymptomEvidence>>,
  onsetOf: (symptom: Finding<SymptomEvidence>) => number,
  graph: ServiceGraph | undefined,
): boolean {
  const { evidence } = symptom;
  if (evidence.kind !== "metric" || causeKindOf(evidence) !== "outage") return false;
  const own = labelKey(evidence.labels);
  const service = graph?.serviceOf(evidence.labels);
  const callers = service === undefined ? undefined : graph?.callers(service);
  return incident.some((other) => {
    if (!isSlowdown(other.evidence) || onsetOf(other) > onsetOf(symptom) + RIVAL_MS) return false;
    if (other.upstream === symptom.upstream && labelKey(other.evidence.labels) === own) return true;
    const caller = graph?.serviceOf(other.evidence.labels);
    return caller !== undefined && callers?.has(caller) === true;
  });
}

/** Whether a symptom began at or before `time` and was still going then. */
function spans(evidence: SymptomEvidence, time: Date): boolean {
  return evidence.onset !== undefined && evidence.onset <= time && (evidence.kind !== "metric" || evidence.endedAt === undefined || evidence.endedAt >= time);
}

/** A metric that climbed (or fell) along a line into the incident phase: dated when the climb began. */
function isTrend(evidence: SymptomEvidence): boolean {
  return evidence.kind === "metric" && evidence.trend !== undefined;
}

/** How far from normal, for ranking: measured for metrics and log patterns; alerts and events rank after. */
function severityOf(evidence: SymptomEvidence): number {
  return evidence.kind === "metric" || evidence.kind === "log-pattern" ? evidence.severity : 0;
}

function compareNumbers(a: number, b: number): number {
  return a === b ? 0 : a < b ? -1 : 1;
}
