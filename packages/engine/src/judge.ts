import { actionResultOf, bottomLineOf, judgeExecution, summarizeGadget, type Evidence, type Finding, type Judgement } from "@pes/analysis";
import type { DataSourceMitigationLinks, Redactor } from "@pes/connectors";
import type { ActionableMitigation, ExecutionJob, PlaybookExecutionResult } from "@pes/contracts";
import type { Logger } from "@pes/logger";
import { offeredMitigations, renderArgs, renderMitigationTemplates, type PlaybookDefinition, type RenderedMitigation } from "@pes/playbooks";
import { summarizeWithLanguageModel, type LanguageModelOptions, type ModelTokenBudget } from "./language-model-summary.js";
import type { Plan, PlannedAction } from "./plan.js";
import { redactJudged } from "./redaction-boundary.js";
import type { WindowedRun } from "./run.js";

/**
 * What judging an execution's runs gave: its result, and what the evidence bundle keeps beside it. The
 * runs, findings and judgement are past the redaction boundary (redaction-boundary.ts): what everything
 * after judging reads.
 */
export interface Judged {
  result: PlaybookExecutionResult;
  runs: readonly WindowedRun[];
  findings: readonly Finding[];
  judgement: Judgement;
  /** Every mitigation rendered for the issue, offered or not: a bundle keeps them all. */
  mitigations: RenderedMitigation[];
  /** The ones the findings offer, as in the result. */
  offered: ActionableMitigation[];
}

export interface JudgeOptions {
  playbook: PlaybookDefinition;
  /** A data source's mitigation links, by its name in the organization. */
  mitigationLinks: (dataSource: string) => DataSourceMitigationLinks | undefined;
  languageModel?: LanguageModelOptions;
  /** This execution's redaction (its organization's policy, a salt of its own). */
  redactor: Redactor;
  logger: Logger;
  signal?: AbortSignal;
  /** The execution's budget of model tokens, which the model pass spends. */
  modelTokens?: ModelTokenBudget;
}

/**
 * Judges what the plan's actions found: evidence in, words out. The analysis ranks the findings into one
 * judgement (the verdict in the result; the bottom line's words and the mitigations read it too) and
 * renders every text from them; a configured language model may reword the bottom line, never the verdict.
 */
export async function judgeRuns(plan: Plan, runs: readonly WindowedRun[], job: ExecutionJob, options: JudgeOptions): Promise<Judged> {
  const { time, gadgets, actions, upstreams } = plan;
  const { attributes } = job;
  // The attributes tell the page from the other alerts; the upstreams, who the paged service calls.
  const unredacted = findingsOf(
    actions,
    runs.map((run) => run.evidence),
    () => true,
  );
  const decided = judgeExecution(unredacted, { time, attributes, upstreams });
  // Rendered once for the issue, offered by the findings: a bundle keeps both, so a replay offers the same.
  // Which are offered is decided, like the verdict, on what the data sources answered.
  const mitigations = renderMitigationTemplates(options.playbook.mitigations, attributes, { time, mitigationLinks: options.mitigationLinks });
  const offered = offeredMitigations(mitigations, decided.ranking, time);
  // The redaction boundary: nothing below reads a data source's answer unredacted.
  const seen = redactJudged({ runs, findings: unredacted, judgement: decided }, options.redactor);
  const { findings, judgement } = seen;
  const perAction = seen.runs.map((run) => run.evidence);
  const actionResults = perAction.map((evidence) => actionResultOf(evidence, time));
  const gadgetsHighlights = gadgets.map(({ gadget, attributes: bound, title }, instanceIndex) => ({
    title,
    ...(gadget.args === undefined ? {} : { args: renderArgs(gadget.args, bound) }),
    highlights: summarizeGadget(
      findingsOf(actions, perAction, (action) => action.instanceIndex === instanceIndex),
      time,
    ),
  }));
  const deterministic = bottomLineOf(judgement, attributes);
  const { languageModel, logger, signal } = options;
  const summary =
    languageModel === undefined
      ? undefined
      : await summarizeWithLanguageModel(
          languageModel,
          { attributes, findings, judgement, deterministic },
          logger.child({ requestId: job.requestId }),
          signal,
          options.modelTokens,
        );
  const result: PlaybookExecutionResult = {
    highlights: summary?.highlights ?? deterministic,
    verdict: judgement.verdict,
    gadgetsHighlights,
    actionableMitigations: offered,
    actionResults,
    ...(summary === undefined ? {} : { analysis: summary.analysis }),
  };
  return { result, runs: seen.runs, findings, judgement, mitigations, offered };
}

/** The findings of the actions `keep` takes, each citing its gadget's instance (and its upstream). */
export function findingsOf(
  actions: readonly PlannedAction[],
  perAction: readonly (readonly Evidence[])[],
  keep: (action: PlannedAction) => boolean,
): Finding[] {
  return actions.flatMap((action, index) =>
    keep(action)
      ? (perAction[index] ?? []).map((evidence) => ({
          gadget: action.gadgetTitle,
          evidence,
          ...(action.instance.upstream === undefined ? {} : { upstream: action.instance.upstream }),
        }))
      : [],
  );
}
