import { z } from "zod";

/**
 * What someone said of a past execution's verdict (its feedback): `right` or `wrong`, the actual cause
 * when they named one, how it was resolved, who said so and when.
 */
export const HistoryConfirmation = z
  .object({
    verdict: z.enum(["right", "wrong"]),
    cause: z.string().optional(),
    resolution: z.string().optional(),
    by: z.string().optional(),
    at: z.iso.datetime().optional(),
  })
  .meta({ id: "HistoryConfirmation" });
export type HistoryConfirmation = z.infer<typeof HistoryConfirmation>;

/** A part of the fingerprint both executions share, and its value. */
export const HistoryMatch = z
  .object({
    field: z.string().meta({
      description: "`cause.kind`, `cause.subject`, `cause.detail`, `conclusion`, `symptom.kind`, `log-template`, `alert`, `playbook`, or `attribute.<name>`",
    }),
    value: z.string(),
  })
  .meta({ id: "HistoryMatch" });
export type HistoryMatch = z.infer<typeof HistoryMatch>;

/** A part of the fingerprint the two executions do not share: its value now, and in the past execution (absent where one has none). */
export const HistoryDifference = z
  .object({
    field: z.string(),
    now: z.string().optional(),
    past: z.string().optional(),
  })
  .meta({ id: "HistoryDifference" });
export type HistoryDifference = z.infer<typeof HistoryDifference>;

/**
 * One past execution of the same organization (and of the caller's teams) like this one: what it
 * concluded, what matched and what differed, how many similar executions there were and when, and what
 * someone confirmed of it. Seen before — to verify: it never changes this execution's verdict.
 */
export const HistoryEntry = z
  .object({
    executionId: z.string(),
    /** That execution's issue time. */
    at: z.iso.datetime(),
    playbook: z.string(),
    conclusion: z.string().meta({ description: "That execution's verdict's conclusion: `cause`, `no-cause` or `ambiguous`." }),
    cause: z
      .object({ kind: z.string(), subject: z.string().optional(), detail: z.string().optional() })
      .optional()
      .meta({ description: "That execution's likely cause, as normalised in its fingerprint (numbers, ids, hashes, addresses masked)." }),
    pageUrl: z.string().optional().meta({ description: "That execution's page, as signed when it ran: it may have expired since." }),
    similarity: z.number().min(0).max(1).meta({ description: "The weighted share of the two fingerprints' parts they have in common." }),
    matched: z.array(HistoryMatch),
    differed: z.array(HistoryDifference),
    occurrences: z.object({ count: z.int().positive(), first: z.iso.datetime(), last: z.iso.datetime() }).meta({
      description: "The executions kept with the same cause (or, without one, the same symptoms), this one included: how many, the first and the last.",
    }),
    confirmed: HistoryConfirmation.optional(),
  })
  .meta({ id: "HistoryEntry" });
export type HistoryEntry = z.infer<typeof HistoryEntry>;

/** At most this many past executions are recalled per result. */
export const MAX_HISTORY_ENTRIES = 3;

/** The most similar past executions, most similar first (at most MAX_HISTORY_ENTRIES), each of another cause or symptom set. */
export const ExecutionHistory = z.array(HistoryEntry).max(MAX_HISTORY_ENTRIES).meta({ id: "ExecutionHistory" });
export type ExecutionHistory = z.infer<typeof ExecutionHistory>;

/**
 * The past executions most like one execution (`GET /playbook/execution/{id}/similar`, the MCP tool
 * `find_similar_incidents`): recalled when asked, over what the caller's teams may see, the execution itself
 * left out. Empty when none is similar enough.
 */
export const SimilarExecutions = z
  .object({
    executionId: z.string().meta({ description: "The execution they are like." }),
    history: ExecutionHistory,
  })
  .meta({ id: "SimilarExecutions" });
export type SimilarExecutions = z.infer<typeof SimilarExecutions>;
