import { Observation, type ActionableMitigation, type BundleAction, type EvidenceBundle, type Verdict } from "@pes/contracts";
import type { Evidence } from "./evidence.js";
import { mitigationFits } from "./mitigation-fit.js";
import { readObservation } from "./observation-reading.js";
import type { Finding } from "./ranking.js";
import { judgeExecution } from "./verdict.js";

/** What a bundle's analysis gives when it is run again. */
export interface Replay {
  verdict: Verdict;
  /**
   * The mitigations the findings call for, as the execution rendered them, in the playbook's order: the
   * result's `actionableMitigations` when the verdict is the recorded one (a silence form's link apart,
   * which a bundle does not hold).
   */
  actionableMitigations: ActionableMitigation[];
  /** The titles of the actions whose observation this build cannot read (a later version's kind). */
  unreadable: string[];
}

/**
 * Runs an execution's analysis again from what its actions observed: each observation read as the worker
 * read it, then judged. Offline and deterministic: the same bundle gives the same verdict, which is the
 * execution's own when the analysis has not changed since it was recorded.
 */
export function replayBundle(bundle: EvidenceBundle): Replay {
  const time = new Date(bundle.issue.time);
  const findings: Finding[] = bundle.actions.flatMap((action) =>
    evidenceOf(action).map((evidence) => ({ gadget: action.gadget, evidence, ...(action.upstream === undefined ? {} : { upstream: action.upstream }) })),
  );
  // As the worker judged it: the issue's attributes tell the page from the other alerts; the upstreams, who the paged service calls.
  const { attributes } = bundle.issue;
  const upstreams = bundle.issue.upstreams ?? [...new Set(bundle.actions.flatMap(({ upstream }) => (upstream === undefined ? [] : [upstream])))];
  const judgement = judgeExecution(findings, { time, attributes, upstreams });
  return {
    verdict: judgement.verdict,
    // As the worker offered them: the same rendering, kept in the bundle, by the same rule.
    actionableMitigations: bundle.mitigations.filter(({ when }) => when === undefined || mitigationFits(when, judgement.ranking, time)).map(({ mitigation }) => mitigation),
    unreadable: bundle.actions.filter(({ observation }) => !isKnown(observation.kind)).map(({ title }) => title),
  };
}

function evidenceOf(action: BundleAction): readonly Evidence[] {
  const { window } = action;
  return readObservation(action.observation, {
    action: action.title,
    window: { start: new Date(window.start), time: new Date(window.time), end: new Date(window.end) },
  });
}

/** The observation kinds this build reads, as the contract lists them. */
const KNOWN_KINDS: ReadonlySet<string> = new Set(Observation.options.map((option) => option.shape.kind.value));

function isKnown(kind: string): boolean {
  return KNOWN_KINDS.has(kind);
}
