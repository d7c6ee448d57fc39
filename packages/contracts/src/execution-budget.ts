import { z } from "zod";

/**
 * What an execution's budget counts: data-source queries started, bytes read from data sources, wall
 * time since the worker began it, and language-model tokens (prompt and completion).
 */
export const BUDGET_KINDS = ["queries", "bytes", "wall-time", "model-tokens"] as const;
export const BudgetKind = z.enum(BUDGET_KINDS).meta({ id: "BudgetKind" });
export type BudgetKind = z.infer<typeof BudgetKind>;

/**
 * Why an action was not run or not waited for: one of the execution's budgets (BUDGET_KINDS), or its
 * organization's queries per minute on the action's data source, shared by every execution.
 */
export const STOPPING_BUDGETS = [...BUDGET_KINDS, "data-source-per-minute"] as const;
export type StoppingBudget = (typeof STOPPING_BUDGETS)[number];
/** A later version may stop for more reasons: a client one version behind still reads its results. */
export const StoppingBudget = z.union([z.enum(STOPPING_BUDGETS), z.string()]);

/**
 * The limits of an execution's budget, as an organization or a playbook sets them (the smaller of the two
 * wins per kind); each one unset is unlimited.
 */
export const BudgetLimits = z
  .strictObject({
    /** Data-source queries it may start (a query asked twice in one execution is asked once). */
    queries: z.int().min(1).max(100_000).optional(),
    /** Bytes it may read from its data sources' answers, counted as each answer arrives. */
    bytes: z.int().min(1).optional(),
    /** Milliseconds from when a worker begins it: past them it starts nothing and waits for nothing more. */
    wallTimeMs: z.int().min(1).max(86_400_000).optional(),
    /** Language-model tokens (prompt and completion) its one model pass may use. */
    modelTokens: z.int().min(1).optional(),
  })
  .meta({ id: "BudgetLimits" });
export type BudgetLimits = z.infer<typeof BudgetLimits>;

/** What an execution spent, per kind of its budget. */
export const BudgetSpent = z
  .object({
    queries: z.int().nonnegative(),
    bytes: z.int().nonnegative(),
    wallTimeMs: z.int().nonnegative(),
    modelTokens: z.int().nonnegative(),
  })
  .meta({ id: "BudgetSpent" });
export type BudgetSpent = z.infer<typeof BudgetSpent>;

/**
 * An execution's budget in its result (an extension of the spec's result): what it spent, always, and
 * its limits. `exhausted` names the first limit that stopped work (an action not started or not waited
 * for, or the model pass not asked); absent when nothing was stopped, even if the spend reached a limit
 * with the last action. `refused`: queries its organization's per-minute budget on a data source
 * refused, by data source name.
 */
export const ExecutionBudget = z
  .object({
    exhausted: z.union([BudgetKind, z.string()]).optional(),
    spent: BudgetSpent,
    limit: z.object({
      queries: z.int().optional(),
      bytes: z.int().optional(),
      wallTimeMs: z.int().optional(),
      modelTokens: z.int().optional(),
    }),
    refused: z.record(z.string(), z.int().nonnegative()).optional(),
  })
  .meta({ id: "ExecutionBudget" });
export type ExecutionBudget = z.infer<typeof ExecutionBudget>;

/** The short answer of an action a budget stopped, as its unchecked entry's `error` says it. */
export function budgetStopReason(budget: StoppingBudget): string {
  return budget === "data-source-per-minute" ? "data-source budget per minute reached" : `budget exhausted: ${budget}`;
}
