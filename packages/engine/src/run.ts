import { context } from "@opentelemetry/api";
import type { TimeWindow } from "@pes/connectors";
import type { ExecutionJob } from "@pes/contracts";
import { inActionSpan } from "./action-span.js";
import type { ConcurrencyLimit } from "./concurrency-limit.js";
import type { BudgetMeter } from "./execution-budget.js";
import type { Plan, PlannedAction } from "./plan.js";
import { runPlannedAction, type ActionRun, type ActionRunner } from "./run-action.js";
import { createOncePerQuery } from "./same-query.js";
import { lookBeforeTrends } from "./trend-lookback.js";

/** An action's run over the window it ran over (the playbook's, or a look-back's wider one). */
export interface WindowedRun extends ActionRun {
  window: TimeWindow;
}

/** What running a plan takes: an action's runner, and the engine's limit of actions at once. */
export interface PlanRunner extends ActionRunner {
  limit: ConcurrencyLimit;
}

/**
 * Runs every action of the plan concurrently within the engine's limit, in playbook order, each the same
 * query over the same window to the same data source fetched once per execution; then looks again,
 * further back, where a symptom was already climbing when the window began (lookBeforeTrends). Returns
 * one run per action of the plan, in its order: a run again replaces the first one's evidence and
 * observation both (and its window), so the bundle keeps what the verdict was judged from. With the
 * execution's `budget`, an action starts only while it allows (runPlannedAction): one it stops is unchecked.
 */
export async function runPlan(runner: PlanRunner, plan: Plan, job: ExecutionJob, signal?: AbortSignal, budget?: BudgetMeter): Promise<WindowedRun[]> {
  // An abort of `signal` drains the queue quickly: running actions end at once (their signals include
  // it, and the race in runPlannedAction ends those that ignore it) and queued ones return without starting.
  // Each action's span is a child of the job's, whichever action's turn ends its wait in the limit.
  const parent = context.active();
  const oncePerQuery = createOncePerQuery<WindowedRun>();
  const runIn = (action: PlannedAction, over: TimeWindow): Promise<WindowedRun> =>
    runner.limit.run(async () => ({
      ...(await inActionSpan(parent, actionSpanOf(action, job.requestId), () => runPlannedAction(runner, job.orgId, action, over, signal, budget))),
      window: over,
    }));
  const { actions, window } = plan;
  const firstLook = await Promise.all(actions.map((action) => oncePerQuery(action.queryKey, action.title, () => runIn(action, window))));
  return lookBeforeTrends(
    firstLook,
    actions.map((action) => typeof action.prepared !== "string" && action.prepared.reportsChanges),
    window,
    (index, over) => {
      const action = actions[index];
      return action === undefined ? Promise.resolve({ evidence: [], window: over }) : runIn(action, over);
    },
  );
}

/** What an action's span says of it: its connector and data source by name, never its title or query. */
function actionSpanOf(planned: PlannedAction, requestId: string): { connectorType: string; dataSource: string; requestId: string } {
  const { prepared, definition } = planned;
  return { connectorType: typeof prepared === "string" ? "unavailable" : prepared.type, dataSource: definition.dataSource, requestId };
}
