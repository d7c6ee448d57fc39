import type { BudgetKind, BudgetLimits, ExecutionBudget, StoppingBudget } from "@pes/contracts";

/** Why a budget stopped an action: the abort reason of an execution's signal at its wall-time limit. */
export class BudgetExhausted extends Error {
  constructor(readonly budget: StoppingBudget) {
    super(`budget exhausted: ${budget}`);
    this.name = "BudgetExhausted";
  }
}

/** The budget an action's signal aborted for, if it aborted for one. */
export function budgetOf(signal: AbortSignal | undefined): StoppingBudget | undefined {
  return signal?.aborted === true && signal.reason instanceof BudgetExhausted ? signal.reason.budget : undefined;
}

/**
 * What one execution spends, against its limits: plain counters, O(1) per action, nothing allocated per
 * action but a refusal's entry. Every check is synchronous, so the checks of the execution's concurrent
 * actions never interleave.
 */
export interface BudgetMeter {
  /**
   * Counts a query about to start, unless a limit is reached (queries started, bytes read, wall time):
   * then it starts nothing and says which limit, the first one to stop work being the one `exhausted` names.
   */
  startQuery(): BudgetKind | undefined;
  /** A query counted by startQuery that asked nothing (an attribute missing): it no longer counts. */
  unstartQuery(): void;
  /** Bytes read from a data source's answer. */
  read(bytes: number): void;
  /** Model tokens still allowed (undefined: no limit). */
  modelTokensLeft(): number | undefined;
  /** Model tokens a model pass used. */
  spendModelTokens(tokens: number): void;
  /** A limit stopped work other than a query (the model pass, a wait cut at the wall-time limit). */
  stopped(kind: BudgetKind): void;
  /** A query its organization's per-minute budget on `dataSource` refused. */
  refused(dataSource: string): void;
  /**
   * The execution's signal: `outer` as it is, or, with a wall-time limit, one that also aborts at the limit
   * with a BudgetExhausted reason.
   */
  readonly signal: AbortSignal | undefined;
  /** The budget for the result (its timer cleared): what was spent, the limits, what stopped work. */
  settle(): ExecutionBudget;
}

/**
 * The limits of an execution of `playbook` for its organization: the smaller of the two per kind, each
 * one set by neither unlimited.
 */
export function budgetLimitsOf(organization: BudgetLimits | undefined, playbook: BudgetLimits | undefined): BudgetLimits {
  const smaller = (a: number | undefined, b: number | undefined) => (a === undefined ? b : b === undefined ? a : Math.min(a, b));
  const limits: BudgetLimits = {};
  const queries = smaller(organization?.queries, playbook?.queries);
  const bytes = smaller(organization?.bytes, playbook?.bytes);
  const wallTimeMs = smaller(organization?.wallTimeMs, playbook?.wallTimeMs);
  const modelTokens = smaller(organization?.modelTokens, playbook?.modelTokens);
  if (queries !== undefined) limits.queries = queries;
  if (bytes !== undefined) limits.bytes = bytes;
  if (wallTimeMs !== undefined) limits.wallTimeMs = wallTimeMs;
  if (modelTokens !== undefined) limits.modelTokens = modelTokens;
  return limits;
}

/** A meter for one execution, from now (`now`: a monotonic clock in ms, performance.now's). */
export function createBudgetMeter(limit: BudgetLimits, outer: AbortSignal | undefined, now: () => number = () => performance.now()): BudgetMeter {
  const startedAt = now();
  let queries = 0;
  let bytes = 0;
  let modelTokens = 0;
  let exhausted: BudgetKind | undefined;
  let refusals: Record<string, number> | undefined;
  const stop = (kind: BudgetKind): BudgetKind => {
    exhausted ??= kind;
    return kind;
  };

  // One controller per execution, and only with a wall-time limit: an execution without one keeps its signal.
  let signal = outer;
  let timer: NodeJS.Timeout | undefined;
  let dispose = () => {};
  const { wallTimeMs } = limit;
  if (wallTimeMs !== undefined) {
    const controller = new AbortController();
    signal = controller.signal;
    const cancel = () => controller.abort(outer?.reason);
    if (outer?.aborted) cancel();
    else outer?.addEventListener("abort", cancel, { once: true });
    // It fires only while the execution runs (settle clears it): whatever it still waited for is cut.
    timer = setTimeout(() => {
      stop("wall-time");
      controller.abort(new BudgetExhausted("wall-time"));
    }, wallTimeMs);
    dispose = () => {
      clearTimeout(timer);
      outer?.removeEventListener("abort", cancel);
    };
  }
  const overWallTime = () => wallTimeMs !== undefined && (budgetOf(signal) === "wall-time" || now() - startedAt >= wallTimeMs);

  return {
    signal,
    startQuery() {
      if (limit.queries !== undefined && queries >= limit.queries) return stop("queries");
      if (limit.bytes !== undefined && bytes >= limit.bytes) return stop("bytes");
      if (overWallTime()) return stop("wall-time");
      queries += 1;
      return undefined;
    },
    unstartQuery() {
      queries -= 1;
    },
    read(count) {
      bytes += count;
    },
    modelTokensLeft: () => (limit.modelTokens === undefined ? undefined : Math.max(0, limit.modelTokens - modelTokens)),
    spendModelTokens(tokens) {
      modelTokens += tokens;
    },
    stopped(kind) {
      stop(kind);
    },
    refused(dataSource) {
      refusals ??= {};
      refusals[dataSource] = (refusals[dataSource] ?? 0) + 1;
    },
    settle() {
      dispose();
      const settled: ExecutionBudget = { spent: { queries, bytes, wallTimeMs: Math.round(now() - startedAt), modelTokens }, limit: { ...limit } };
      if (exhausted !== undefined) settled.exhausted = exhausted;
      if (refusals !== undefined) settled.refused = refusals;
      return settled;
    },
  };
}
