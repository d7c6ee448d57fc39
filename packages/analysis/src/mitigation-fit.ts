import type { MitigationCondition } from "@pes/contracts";
import { causeKindOf, type Ranking } from "./ranking.js";

/**
 * Whether the findings meet every condition of a mitigation's `when`: `abnormal` (any symptom or the page
 * firing, or neither),
 * `likelyCause` (the likely cause is of that kind, as the verdict gives it: a change's, a symptom's such as
 * `saturation`, `upstream` for an upstream's symptom, `node`; a family names each of its mechanisms:
 * `unschedulable` fits `unschedulable/taint`), `change` (a change of that kind came before
 * the issue time, or is the likely cause), `action` (that action, by its filled title, showed the likely
 * cause or a symptom). The worker offers mitigations by it, and a replay says which it would offer.
 */
export function mitigationFits(when: MitigationCondition, ranking: Ranking, time: Date): boolean {
  const cause = ranking.likelyCause;
  const causeChange = cause?.basis === "change" ? cause.finding.evidence.change : undefined;
  // A page firing is no symptom, but it is an alert to silence while someone looks.
  if (when.abnormal !== undefined && when.abnormal !== ranking.symptoms.length + ranking.paged.length > 0) return false;
  // The kind the verdict gives the cause: an upstream's symptom is `upstream`, never its own kind (an
  // upstream's memory at its limit is no reason to raise the paged service's).
  const causeKind =
    cause?.basis === "node" || cause?.basis === "latency"
      ? cause.basis
      : cause?.basis === "symptom" || cause?.basis === "fault"
        ? cause.finding.upstream === undefined
          ? causeKindOf(cause.finding.evidence)
          : "upstream"
        : causeChange;
  if (when.likelyCause !== undefined && !kindMatches(when.likelyCause, causeKind)) return false;
  if (when.change !== undefined) {
    const before = ranking.changes.some(({ evidence }) => evidence.change === when.change && evidence.at.getTime() <= time.getTime());
    if (!before && causeChange !== when.change) return false;
  }
  if (when.action !== undefined) {
    const title = when.action;
    const found = cause?.finding.evidence.action === title || ranking.symptoms.some(({ evidence }) => evidence.action === title);
    if (!found) return false;
  }
  return true;
}

/** Whether a mitigation's `likelyCause` names the cause's kind, or the family of a `family/mechanism` kind. */
function kindMatches(wanted: string, kind: string | undefined): boolean {
  return kind !== undefined && (kind === wanted || kind.startsWith(`${wanted}/`));
}
