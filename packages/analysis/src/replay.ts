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
  /** The titles of the actions whose observation was cut to fit the bundle's cap (their `truncated` says how). */
  truncated: string[];
}

/**
 * Runs an execution's analysis again from what its actions observed: each observation read as the worker
 * read it, then judged. Offline and deterministic: the same bundle gives the same verdict, which is the
 * execution's own when the analysis has not changed since it was recorded.
 */
export function replayBundle(bundle: EvidenceBundle): Replay {
  // An observation of a known kind that is not what its schema says (a hand-written one, the contract
  // keeps it as it is) is read as its action failing, as one of an unknown kind is.
  const unreadable = bundle.actions.filter(({ observation }) => !isKnown(observation.kind) || !Observation.safeParse(observation).success);
  const { verdict, actionableMitigations } = judgeBundle(
    bundle,
    bundle.actions.map((action) =>
      unreadable.includes(action) && isKnown(action.observation.kind)
        ? [
            {
              gadget: action.gadget ?? action.title,
              evidence: { kind: "failed", action: action.title, reason: `cannot read its observation of kind "${action.observation.kind}"` },
            },
          ]
        : findingsOfAction(action, bundle.issue.attributes),
    ),
  );
  return {
    verdict,
    actionableMitigations,
    unreadable: unreadable.map(({ title }) => title),
    truncated: bundle.actions.filter(({ truncated }) => truncated !== undefined && truncated.length > 0).map(({ title }) => title),
  };
}

/**
 * One action's findings, as the worker had them: its observation read over its window, cited by its
 * title, with the issue's attributes when it is about the paged service (not an upstream's).
 */
export function findingsOfAction(action: BundleAction, attributes?: Readonly<Record<string, string>>): Finding[] {
  return evidenceOf(action, action.upstream === undefined ? attributes : undefined).map((evidence) => ({
    gadget: action.gadget ?? action.title,
    evidence,
    ...(action.upstream === undefined ? {} : { upstream: action.upstream }),
  }));
}

/**
 * The verdict and the mitigations of a bundle's findings (one list per action, as findingsOfAction gives
 * them), judged as the worker judged them: the issue's attributes tell the page from the other alerts;
 * the upstreams, who the paged service calls.
 */
export function judgeBundle(bundle: EvidenceBundle, perAction: ReadonlyArray<readonly Finding[]>): Pick<Replay, "verdict" | "actionableMitigations"> {
  const time = new Date(bundle.issue.time);
  const { attributes } = bundle.issue;
  const upstreams = bundle.issue.upstreams ?? [...new Set(bundle.actions.flatMap(({ upstream }) => (upstream === undefined ? [] : [upstream])))];
  const judgement = judgeExecution(perAction.flat(), { time, attributes, upstreams });
  return {
    verdict: judgement.verdict,
    // As the worker offered them: the same rendering, kept in the bundle, by the same rule.
    actionableMitigations: bundle.mitigations
      .filter(({ when }) => when === undefined || mitigationFits(when, judgement.ranking, time))
      .map(({ mitigation }) => mitigation),
  };
}

function evidenceOf(action: BundleAction, attributes: Readonly<Record<string, string>> | undefined): readonly Evidence[] {
  const { window } = action;
  return readObservation(action.observation, {
    action: action.title,
    window: { start: new Date(window.start), time: new Date(window.time), end: new Date(window.end) },
    ...(attributes === undefined ? {} : { attributes }),
  });
}

/** The observation kinds this build reads, as the contract lists them. */
const KNOWN_KINDS: ReadonlySet<string> = new Set(Observation.options.map((option) => option.shape.kind.value));

function isKnown(kind: string): boolean {
  return KNOWN_KINDS.has(kind);
}
