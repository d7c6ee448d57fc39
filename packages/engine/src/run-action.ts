import { formatDuration, type Evidence } from "@pes/analysis";
import type { AnyActionRequest, Observed, TimeWindow } from "@pes/connectors";
import { budgetStopReason, errorMessage, type StoppingBudget } from "@pes/contracts";
import type { Logger } from "@pes/logger";
import { evidenceOf } from "./evidence-bundle.js";
import { budgetOf, type BudgetMeter } from "./execution-budget.js";
import type { PlannedAction } from "./plan.js";
import { inQuerySlot, NoQuerySlotError, type QueryMinuteLimit, type QuerySlots } from "./query-slots.js";

/**
 * How an action ended: `ok` (whatever it found), `failed` (the data source failed it, or it could not
 * run), `timeout` (its own deadline), `cancelled` (the execution's signal), `skipped` (the issue lacks
 * an attribute its query needs), `budget` (a budget stopped it before it started, or cut its wait).
 */
export type ActionOutcome = "ok" | "failed" | "timeout" | "cancelled" | "skipped" | "budget";

/** One finished action, named by configuration only: never a URL, a query, a secret or an attribute value. */
export interface ActionReport {
  orgId: string;
  /** The connector type (`prometheus`, `http`…), or `unknown` when no connector takes the action. */
  connector: string;
  /** The data source's name in the organization's configuration. */
  dataSource: string;
  outcome: ActionOutcome;
  /** How long it ran; absent when it never started. */
  seconds?: number;
}

/** What one action ran into: its evidence and, when it asked its data source, what it observed. */
export interface ActionRun {
  evidence: readonly Evidence[];
  observed?: Observed;
}

/** What running an action takes from the engine that runs it. */
export interface ActionRunner {
  run: (request: AnyActionRequest) => Promise<Observed>;
  querySlots: QuerySlots;
  logger: Logger;
  /** Each action's own deadline, from the moment it starts. */
  actionTimeoutMs: number;
  onActionFinished?: (report: ActionReport) => void;
}

const ABORTED = Symbol("aborted");
/** How long past its deadline an action that ignores its signal may take before the engine stops waiting. */
const ABORT_GRACE_MS = 1_000;

/**
 * Runs one planned action over `window` within its own deadline (and the execution's `outer` signal),
 * in its data source's query slot when it has a limit: what it observed read into evidence. A failure,
 * a timeout or a cancellation is evidence too (`failed`); this never throws. Each ending is reported to
 * `onActionFinished` with its outcome. With the execution's `budget`, a query starts only while no limit
 * is reached and its organization's minute on the data source has room (else it is `failed` with the
 * budget that stopped it); its bytes are counted, and a wait the wall-time limit cuts is that budget's.
 */
export async function runPlannedAction(
  runner: ActionRunner,
  orgId: string,
  planned: PlannedAction,
  window: TimeWindow,
  outer: AbortSignal | undefined,
  budget?: BudgetMeter,
): Promise<ActionRun> {
  const { title, definition, prepared } = planned;
  const report = reporterOf(runner, orgId, planned);
  if (outer?.aborted) {
    const stoppedBy = budgetOf(outer);
    report(stoppedBy === undefined ? "cancelled" : "budget");
    return { evidence: [stoppedBy === undefined ? failed(title, "cancelled before it started") : budgetStopped(title, stoppedBy)] };
  }
  if (typeof prepared === "string") {
    report("failed");
    return { evidence: [failed(title, prepared)] };
  }
  const over = budget?.startQuery();
  if (over !== undefined) {
    report("budget");
    return { evidence: [budgetStopped(title, over)] };
  }
  if (planned.perMinute !== undefined) {
    const minute = await takeQueryOfMinute(runner, planned.perMinute);
    if (minute !== "taken") {
      budget?.unstartQuery();
      if (minute === "refused") budget?.refused(definition.dataSource);
      report(minute === "refused" ? "budget" : "failed");
      return { evidence: [minute === "refused" ? budgetStopped(title, "data-source-per-minute") : failed(title, minute.error)] };
    }
  }
  const bounds = actionBounds(runner.actionTimeoutMs, outer);
  const startedAt = performance.now();
  const ended = (link?: string) => {
    const stoppedBy = bounds.timedOut() ? undefined : budgetOf(outer);
    report(bounds.timedOut() ? "timeout" : stoppedBy === undefined ? "cancelled" : "budget", startedAt);
    if (stoppedBy !== undefined) return budgetStopped(title, stoppedBy, link);
    return failed(title, bounds.timedOut() ? `timed out after ${formatDuration(runner.actionTimeoutMs)}` : "cancelled before it finished", link);
  };
  try {
    const { signal, deadline } = bounds;
    const ran = inQuerySlot(runner.querySlots, planned.slots, slotOptions(runner, definition.dataSource, signal), () =>
      runner.run({ action: prepared, title, attributes: planned.attributes, window, signal, deadline }),
    );
    // Whatever the action does after the race is decided is handled by the race: never unhandled.
    const observed = await Promise.race([ran, bounds.abandoned]);
    if (observed === ABORTED) return { evidence: [ended()] };
    if (budget !== undefined) {
      if (observed.bytesRead !== undefined) budget.read(observed.bytesRead);
      // It asked nothing: an attribute its query needs is missing.
      if (observed.observation.kind === "skipped") budget.unstartQuery();
    }
    // An upstream's instance reads its answer as it is: the attributes are the paged service's.
    const attributes = planned.instance.upstream === undefined ? planned.attributes : undefined;
    return settled(observed, title, window, attributes, signal, { report, startedAt, ended });
  } catch (error) {
    if (error instanceof NoQuerySlotError) {
      report(bounds.timedOut() ? "timeout" : "failed", startedAt);
      return { evidence: [failed(title, error.message)] };
    }
    if (bounds.signal.aborted) return { evidence: [ended()] };
    runner.logger.warn({ err: error, action: title, dataSource: definition.dataSource }, "action threw instead of returning evidence");
    report("failed", startedAt);
    return { evidence: [failed(title, "failed unexpectedly (details in the worker log)")] };
  } finally {
    bounds.dispose();
  }
}

function failed(action: string, reason: string, link?: string): Evidence {
  return { kind: "failed", action, reason, ...(link === undefined ? {} : { link }) };
}

/** An action a budget stopped: unchecked, saying which budget. */
function budgetStopped(action: string, budget: StoppingBudget, link?: string): Evidence {
  return { kind: "failed", action, reason: budgetStopReason(budget), budget, ...(link === undefined ? {} : { link }) };
}

/**
 * Counts the query in its organization's minute on the data source: `taken` when it may start, `refused`
 * when the minute is full, or why the count could not be reached (the action fails, as without a slot).
 */
async function takeQueryOfMinute(runner: ActionRunner, limit: QueryMinuteLimit): Promise<"taken" | "refused" | { error: string }> {
  try {
    return (await runner.querySlots.takeQueryOfMinute(limit)) ? "taken" : "refused";
  } catch (error) {
    runner.logger.warn({ err: error, dataSource: limit.dataSource }, "could not count a query in its data source's minute");
    return { error: `could not count the query in the budget per minute of data source ${limit.dataSource}: ${errorMessage(error)}` };
  }
}

function reporterOf(runner: ActionRunner, orgId: string, planned: PlannedAction): (outcome: ActionOutcome, startedAt?: number) => void {
  return (outcome, startedAt) =>
    runner.onActionFinished?.({
      orgId,
      connector: planned.connector,
      dataSource: planned.definition.dataSource,
      outcome,
      ...(startedAt === undefined ? {} : { seconds: (performance.now() - startedAt) / 1_000 }),
    });
}

/** A slot is held for the action's deadline at most (its lease frees it after that, should this process die). */
function slotOptions(runner: ActionRunner, dataSource: string, signal: AbortSignal) {
  return {
    timeoutMs: runner.actionTimeoutMs,
    leaseMs: runner.actionTimeoutMs + ABORT_GRACE_MS,
    signal,
    onReleaseError: (error: unknown) => runner.logger.warn({ err: error, dataSource }, "could not give back a query slot"),
  };
}

/** The evidence of an action that answered, and its outcome reported (a failure at an abort as the abort). */
function settled(
  observed: Observed,
  title: string,
  window: TimeWindow,
  attributes: Readonly<Record<string, string>> | undefined,
  signal: AbortSignal,
  ending: { report: (outcome: ActionOutcome, startedAt?: number) => void; startedAt: number; ended: (link?: string) => Evidence },
): ActionRun {
  // The analysis reads what the action observed: the one way from a data source's answer to evidence.
  const evidence = evidenceOf(observed, title, window, attributes);
  const [only] = evidence;
  if (only === undefined) return { evidence: [{ kind: "none", action: title, what: "findings" }], observed };
  if (evidence.length === 1 && only.kind === "failed" && signal.aborted) {
    const stopped = ending.ended(only.link);
    return {
      evidence: [stopped],
      observed: { ...observed, observation: { kind: "failed", reason: stopped.kind === "failed" ? stopped.reason : only.reason } },
    };
  }
  // A skipped action never asked: no duration.
  if (evidence.length === 1 && only.kind === "skipped") ending.report("skipped");
  else ending.report(evidence.length === 1 && only.kind === "failed" ? "failed" : "ok", ending.startedAt);
  return { evidence, observed };
}

/** An action's own signal and deadline: its timer, the execution's signal, and the grace after either. */
interface ActionBounds {
  signal: AbortSignal;
  /** When the timer fires, at the earliest: the HTTP client spends no retry past it. */
  deadline: number;
  /** Settles a grace period after the signal aborts, for an action that ignores it. */
  abandoned: Promise<typeof ABORTED>;
  timedOut(): boolean;
  dispose(): void;
}

function actionBounds(actionTimeoutMs: number, outer: AbortSignal | undefined): ActionBounds {
  // One plain controller per action: AbortSignal.timeout/any build transferable signals, which the
  // benchmark profile showed costing more than the rest of the engine's bookkeeping. Both ways it can
  // abort are ours, so the grace period starts there instead of in another listener on the signal.
  const controller = new AbortController();
  const signal = controller.signal;
  let timedOut = false;
  let giveUp = () => {};
  // Connectors end at the signal with their own evidence (which keeps its link); this only cuts off one
  // that ignores the signal, a moment later.
  const abandoned = new Promise<typeof ABORTED>((resolve) => {
    giveUp = () => resolve(ABORTED);
  });
  let grace: NodeJS.Timeout | undefined;
  const stop = (reason: unknown) => {
    if (signal.aborted) return;
    controller.abort(reason);
    grace = setTimeout(giveUp, ABORT_GRACE_MS);
  };
  const deadline = Date.now() + actionTimeoutMs;
  const timer = setTimeout(() => {
    timedOut = true;
    stop(new DOMException(`timed out after ${actionTimeoutMs} ms`, "TimeoutError"));
  }, actionTimeoutMs);
  const cancel = () => stop(outer?.reason);
  outer?.addEventListener("abort", cancel, { once: true });
  return {
    signal,
    deadline,
    abandoned,
    timedOut: () => timedOut,
    dispose() {
      clearTimeout(timer);
      clearTimeout(grace);
      outer?.removeEventListener("abort", cancel);
    },
  };
}
