import type { NormalAction, RuledOutChange, UncheckedAction, Verdict, VerdictCause, VerdictFinding } from "@pes/contracts";
import type { ChangeEvidence, Labels, SymptomEvidence } from "./evidence.js";
import { causeKindOf, rankFindings, type Finding, type LikelyCause, type RankedChange, type Ranking, type RankOptions } from "./ranking.js";

/**
 * What the analysis made of an execution's findings: the verdict (the decision, as data, for the result)
 * and the ranking it was read from (the evidence behind each of its parts, for the words). The bottom
 * line is rendered from it (bottomLineOf), so that the text and the data cannot disagree.
 */
export interface Judgement {
  /** The issue time. */
  time: Date;
  verdict: Verdict;
  ranking: Ranking;
}

/**
 * Judges an execution's findings: rankFindings' rules, read as a verdict. The conclusion is `cause` when
 * the rules name a likely cause, `ambiguous` when they name it with a rival as likely (RIVAL_MS), else
 * `no-cause`. Pure and deterministic.
 */
export function judgeExecution(findings: readonly Finding[], options: RankOptions): Judgement {
  const ranking = rankFindings(findings, options);
  const { likelyCause } = ranking;
  const verdict: Verdict = {
    conclusion: likelyCause === undefined ? "no-cause" : likelyCause.rival === undefined ? "cause" : "ambiguous",
    ...(likelyCause === undefined ? {} : { cause: { ...causeOf(likelyCause), confidence: confidenceOf(ranking, likelyCause) } }),
    ...(likelyCause?.rival === undefined
      ? {}
      : { alternative: { ...withRemedy(causeFinding(likelyCause.rival), likelyCause.rival.evidence), confidence: "low" } satisfies VerdictCause }),
    symptoms: ranking.symptoms.map(verdictFinding),
    background: ranking.background.map(verdictFinding),
    ...(ranking.paged.length === 0 ? {} : { paged: ranking.paged.map(verdictFinding) }),
    ruledOut: ruledOutChanges(ranking).map(ruledOut),
    normal: ranking.normal.map(({ evidence }): NormalAction => ({ action: evidence.action, found: evidence.kind === "none" ? "none" : "within-usual-range" })),
    unchecked: [
      ...ranking.noData.map(({ evidence }): UncheckedAction => ({ action: evidence.action, reason: "no-data", noData: evidence.reason })),
      ...ranking.failed.map(
        ({ evidence }): UncheckedAction => ({
          action: evidence.action,
          reason: "failed",
          error: evidence.reason,
          ...(evidence.budget === undefined ? {} : { budget: evidence.budget }),
        }),
      ),
      ...ranking.skipped.map(({ evidence }): UncheckedAction => ({ action: evidence.action, reason: "not-run", missing: [...evidence.missing] })),
    ],
    ...partialOf(ranking),
  };
  return { time: options.time, verdict, ranking };
}

/** `partial` when budgets stopped actions: which ones, in the order the findings cite them first. */
function partialOf(ranking: Ranking): Pick<Verdict, "partial"> {
  const budgets = [...new Set(ranking.failed.flatMap(({ evidence }) => (evidence.budget === undefined ? [] : [evidence.budget])))];
  return budgets.length === 0 ? {} : { partial: { budgets } };
}

/** The changes the ranking rules out: all it lists but the likely cause's rival, which is not ruled out. */
export function ruledOutChanges(ranking: Ranking): RankedChange[] {
  const rival = ranking.likelyCause?.rival?.evidence;
  return ranking.changes.filter((change) => change.evidence !== rival);
}

/**
 * `high`: a change followed by dated symptoms, or a symptom of a cause's kind that began before the
 * next; `medium`: a change compared with the issue time only, a cause's kind that began with other
 * symptoms, an alert (a condition that held, not what made it hold), where a slowdown begins; `low`: a
 * rival is as likely.
 */
function confidenceOf(ranking: Ranking, cause: LikelyCause): VerdictCause["confidence"] {
  if (cause.rival !== undefined) return "low";
  if (cause.basis === "change") return ranking.first === undefined ? "medium" : "high";
  // The state says so itself, or only what fails around it does.
  if (cause.basis === "fault") return cause.finding.evidence.certainty === "decisive" ? "high" : "medium";
  // Only the node's pods moved, and the node itself fires or warns: where and why agree.
  if (cause.basis === "node") return "high";
  // Which rose most says where, never why.
  if (cause.basis === "latency") return "medium";
  // A log line says what failed, not always why.
  if (cause.finding.evidence.kind === "alert" || cause.finding.evidence.kind === "log-pattern") return "medium";
  return cause.leadMs > 0 ? "high" : "medium";
}

/**
 * The likely cause as the verdict states it: a node is the node, whichever of its symptoms came first;
 * any other, as causeFinding.
 */
function causeOf(cause: LikelyCause): VerdictFinding & Pick<VerdictCause, "remedy"> {
  const finding = causeFinding(cause.finding);
  if (cause.basis === "node") return { ...finding, kind: "node", subject: `node/${cause.node}` };
  if (cause.basis === "latency") return { ...finding, kind: "latency", detail: slowdownDetail(cause.slowed, cause.byGraph) };
  return withRemedy(finding, cause.finding.evidence);
}

/** A fault's remedy beside it: what would undo it, naming its object. */
function withRemedy(finding: VerdictFinding, evidence: Finding["evidence"]): VerdictFinding & Pick<VerdictCause, "remedy"> {
  return evidence.kind === "fault" ? { ...finding, remedy: evidence.remedy } : finding;
}

function ruledOut(change: RankedChange): RuledOutChange {
  return { ...verdictFinding(change), why: change.verdict, ...(change.leadMs === undefined ? {} : { leadMs: change.leadMs }) };
}

/** What tells where a slowdown begins: it alone slowed, it explains the others by who calls whom, or it rose most. */
function slowdownDetail(slowed: number, byGraph: boolean): string {
  if (slowed === 1) return "the one service slowed";
  return `${byGraph ? "explains by who calls whom of" : "rose most of"} ${slowed} services slowed`;
}

/**
 * A cause as the verdict states it: an upstream's symptom is the upstream (kind `upstream`, the service as
 * its subject), whatever its own kind; any other, as verdictFinding.
 */
function causeFinding(finding: Finding<ChangeEvidence> | Finding<SymptomEvidence>): VerdictFinding {
  const stated = verdictFinding(finding);
  return finding.upstream === undefined ? stated : { ...stated, kind: "upstream", subject: finding.upstream };
}

/**
 * A change or a symptom as the verdict states it: its kind, what it is about (an upstream's symptom that
 * names nothing else is about the upstream), its action, when it began.
 */
function verdictFinding({ evidence, upstream }: Finding<ChangeEvidence> | Finding<SymptomEvidence>): VerdictFinding {
  const about = aboutOf(evidence);
  const subject = about.subject === undefined || about.subject === "" ? upstream : about.subject;
  const { detail } = about;
  const onset = evidence.kind === "change" ? evidence.at : evidence.onset;
  return {
    kind: kindOf(evidence),
    ...(subject === undefined || subject === "" ? {} : { subject }),
    ...(detail === undefined || detail === "" ? {} : { detail }),
    action: evidence.action,
    ...(onset === undefined ? {} : { onset: onset.toISOString() }),
  };
}

function kindOf(evidence: ChangeEvidence | SymptomEvidence): string {
  if (evidence.kind === "change") return evidence.change;
  const cause = causeKindOf(evidence);
  if (cause !== undefined) return cause;
  switch (evidence.kind) {
    case "metric":
      if (evidence.flat === true) return "flat";
      return evidence.value > evidence.baseline ? "rise" : "drop";
    case "log-pattern":
      return "log-pattern";
    case "event":
      return "warning-event";
    case "alert":
      return "alert";
    case "fault":
      return evidence.mechanism;
  }
}

/** What the evidence is about, as it names it, and the detail that tells it apart (see VerdictFinding). */
function aboutOf(evidence: ChangeEvidence | SymptomEvidence): { subject?: string | undefined; detail?: string | undefined } {
  switch (evidence.kind) {
    case "change":
      return { subject: evidence.subject, detail: evidence.detail };
    case "metric":
      return { subject: seriesName(evidence.labels), detail: evidence.saturation?.of };
    case "log-pattern":
      // The total of every line is no pattern: the one it was named by is only its most common.
      return {
        ...(evidence.labels === undefined ? {} : { subject: seriesName(evidence.labels) }),
        detail: evidence.total === true ? "all lines" : evidence.pattern,
      };
    case "event":
      // The reason says what kind of thing happened; the message what: the image, the command, the node.
      return { subject: evidence.subject, detail: evidence.message === undefined ? evidence.reason : `${evidence.reason}: ${evidence.message}` };
    case "alert":
      return { subject: evidence.subject, detail: evidence.name };
    case "fault":
      return { subject: evidence.subject, detail: evidence.detail };
  }
}

/** "db=orders-db, instance=db-1:9187": a series by its labels, sorted by name, as alerts name their subject. */
export function seriesName(labels: Labels): string {
  return Object.keys(labels)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    .map((name) => `${name}=${labels[name] ?? ""}`)
    .join(", ");
}
