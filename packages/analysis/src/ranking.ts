import type {
  ChangeEvidence,
  Evidence,
  FailedEvidence,
  LogPatternEvidence,
  MetricEvidence,
  NoDataEvidence,
  NoneEvidence,
  SkippedEvidence,
  SymptomEvidence,
} from "./evidence.js";

/** One action's evidence, with the (templated) title of the gadget it belongs to. */
export interface Finding<E extends Evidence = Evidence> {
  gadget: string;
  evidence: E;
}

/** A change at most this long before the first symptom is its likely cause (unless told otherwise). */
export const CHANGE_LOOKBACK_MS = 30 * 60_000;

/**
 * What a piece of evidence is for the bottom line: a `symptom` (abnormal, firing, a warning), a `change`
 * (a cause candidate), `normal` (compared with its baseline and within it, or looked for and not found:
 * `none`), an `answer` without a baseline,
 * or nothing checked: `no-data`, `failed`, `skipped`.
 */
export type Role = "symptom" | "change" | "normal" | "answer" | "no-data" | "failed" | "skipped";

export interface RankOptions {
  /** The issue time: the reference for a change when no symptom is dated. */
  time: Date;
  /** How long before the first symptom a change counts as its likely cause; default 30 min. */
  changeLookbackMs?: number;
}

export interface Ranking {
  /** The symptoms, strongest first (measured severity; others after); ties keep playbook order. */
  symptoms: Array<Finding<SymptomEvidence>>;
  /** When the earliest dated symptoms began, and those symptoms (strongest first); none dated: undefined. */
  first?: { at: Date; symptoms: Array<Finding<SymptomEvidence>> };
  /**
   * The change that most likely caused the symptoms: the latest one at most the lookback before the
   * first symptom (before the issue time when no symptom is dated); ties keep playbook order. Only when
   * there are symptoms. `leadMs`: how long before the first symptom (or the issue) it happened.
   */
  likelyCause?: { finding: Finding<ChangeEvidence>; leadMs: number };
  /** The other changes, earliest first; ties keep playbook order. */
  changes: Array<Finding<ChangeEvidence>>;
  /** Compared with their baseline and within normal variation, or nothing found, in playbook order. */
  normal: Array<Finding<MetricEvidence | LogPatternEvidence | NoneEvidence>>;
  /** Answers without a baseline (instant values, plain answers, events that are not warnings), in playbook order. */
  answers: Finding[];
  noData: Array<Finding<NoDataEvidence>>;
  failed: Array<Finding<FailedEvidence>>;
  skipped: Array<Finding<SkippedEvidence>>;
}

/** The role of a piece of evidence (see Role). */
export function roleOf(evidence: Evidence): Role {
  switch (evidence.kind) {
    case "metric":
    case "log-pattern":
      return evidence.abnormal ? "symptom" : "normal";
    case "alert":
      return "symptom";
    case "event":
      return evidence.warning ? "symptom" : "answer";
    case "change":
      return "change";
    case "none":
      return "normal";
    case "values":
    case "answer":
      return "answer";
    case "no-data":
    case "failed":
    case "skipped":
      return evidence.kind;
  }
}

/**
 * Ranks an execution's findings into likely causes, by evidence, then by time: symptoms strongest first;
 * the symptoms that began first (what starts before the others is the likelier cause of what follows);
 * and a change (deploy, config, restart) shortly before the first symptom as the likely cause, ahead of
 * every symptom. Deterministic: ties keep playbook order (the order of `findings`).
 */
export function rankFindings(findings: readonly Finding[], options: RankOptions): Ranking {
  const lookback = options.changeLookbackMs ?? CHANGE_LOOKBACK_MS;
  const ranking: Ranking = { symptoms: [], changes: [], normal: [], answers: [], noData: [], failed: [], skipped: [] };
  for (const finding of findings) {
    const { gadget, evidence } = finding;
    switch (evidence.kind) {
      case "metric":
      case "log-pattern":
        if (evidence.abnormal) ranking.symptoms.push({ gadget, evidence });
        else ranking.normal.push({ gadget, evidence });
        break;
      case "alert":
        ranking.symptoms.push({ gadget, evidence });
        break;
      case "event":
        if (evidence.warning) ranking.symptoms.push({ gadget, evidence });
        else ranking.answers.push(finding);
        break;
      case "change":
        ranking.changes.push({ gadget, evidence });
        break;
      case "none":
        ranking.normal.push({ gadget, evidence });
        break;
      case "values":
      case "answer":
        ranking.answers.push(finding);
        break;
      case "no-data":
        ranking.noData.push({ gadget, evidence });
        break;
      case "failed":
        ranking.failed.push({ gadget, evidence });
        break;
      case "skipped":
        ranking.skipped.push({ gadget, evidence });
        break;
    }
  }
  // Array.prototype.sort is stable: equal keys stay in playbook order.
  ranking.symptoms.sort((a, b) => compareNumbers(severityOf(b.evidence), severityOf(a.evidence)));
  ranking.changes.sort((a, b) => compareNumbers(a.evidence.at.getTime(), b.evidence.at.getTime()));

  const dated = ranking.symptoms.filter((symptom) => symptom.evidence.onset !== undefined);
  const earliest = Math.min(...dated.map((symptom) => symptom.evidence.onset?.getTime() ?? Infinity));
  if (Number.isFinite(earliest)) {
    ranking.first = { at: new Date(earliest), symptoms: dated.filter((symptom) => symptom.evidence.onset?.getTime() === earliest) };
  }

  if (ranking.symptoms.length > 0) {
    const reference = ranking.first?.at.getTime() ?? options.time.getTime();
    let cause: Finding<ChangeEvidence> | undefined;
    for (const change of ranking.changes) {
      const lead = reference - change.evidence.at.getTime();
      // Changes are earliest first: a later one in range replaces an earlier one; an equal time does not.
      if (lead >= 0 && lead <= lookback && (cause === undefined || change.evidence.at.getTime() > cause.evidence.at.getTime())) cause = change;
    }
    if (cause !== undefined) {
      ranking.likelyCause = { finding: cause, leadMs: reference - cause.evidence.at.getTime() };
      ranking.changes = ranking.changes.filter((change) => change !== cause);
    }
  }
  return ranking;
}

/** How far from normal, for ranking: measured for metrics and log patterns; alerts and events rank after. */
function severityOf(evidence: SymptomEvidence): number {
  return evidence.kind === "metric" || evidence.kind === "log-pattern" ? evidence.severity : 0;
}

function compareNumbers(a: number, b: number): number {
  return a === b ? 0 : a < b ? -1 : 1;
}
