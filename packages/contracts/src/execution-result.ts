import { z } from "zod";
import { ExecutionBudget } from "./execution-budget.js";
import { ExecutionHistory } from "./execution-history.js";
import { Verdict } from "./execution-verdict.js";

export const GadgetHighlights = z
  .object({
    title: z.string(),
    args: z.record(z.string(), z.unknown()).optional(),
    highlights: z.string().optional(),
  })
  .meta({ id: "GadgetHighlights" });
export type GadgetHighlights = z.infer<typeof GadgetHighlights>;

export const ActionableMitigation = z
  .object({
    toolName: z.string(),
    customName: z.string().optional(),
    url: z.string().optional(),
    action: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ id: "ActionableMitigation" });
export type ActionableMitigation = z.infer<typeof ActionableMitigation>;

export const ActionResult = z
  .object({
    title: z.string().optional(),
    shortAnswer: z.string().optional(),
    mostImportantLink: z.string().optional(),
    // An extension of the spec's result, optional as all its fields: a client that knows only the spec ignores it.
    chartUrl: z
      .string()
      .optional()
      .meta({
        description:
          "Where the action's chart is drawn (a metric finding, or a log count that is one): GET it with the bearer token for SVG, " +
          "or PNG with `Accept: image/png`. Absolute when the service knows its public address (PUBLIC_URL), else a path on it. " +
          "Readable as long as the execution is.",
      }),
  })
  .meta({ id: "ActionResult" });
export type ActionResult = z.infer<typeof ActionResult>;

/**
 * How the bottom line was written (an extension of the spec's result, whose fields are all optional):
 * present when a language model is configured for the worker. `by` says whose text `highlights` is; the
 * model's token counts and the pass's latency when it was asked; `fallback` why its text was not used.
 */
export const ExecutionAnalysis = z
  .object({
    by: z.enum(["deterministic", "language-model"]),
    model: z.string().optional(),
    promptTokens: z.number().int().nonnegative().optional(),
    completionTokens: z.number().int().nonnegative().optional(),
    latencyMs: z.number().nonnegative().optional(),
    fallback: z.string().optional(),
  })
  .meta({ id: "ExecutionAnalysis" });
export type ExecutionAnalysis = z.infer<typeof ExecutionAnalysis>;

/** The 200 body of an execution. A failed execution is `{ error }` (still a 200, as the spec allows). */
export const PlaybookExecutionResult = z
  .object({
    error: z.string().optional(),
    highlights: z.string().optional(),
    // Optional, as every field of the spec's result: a client that knows only the spec ignores it.
    verdict: Verdict.optional(),
    gadgetsHighlights: z.array(GadgetHighlights).optional(),
    enrichmentLink: z.string().optional(),
    actionableMitigations: z.array(ActionableMitigation).optional(),
    actionResults: z.array(ActionResult).optional(),
    analysis: ExecutionAnalysis.optional(),
    budget: ExecutionBudget.optional().meta({
      description:
        "What the execution spent of its budget (queries, bytes read, wall time, model tokens) and its limits; `exhausted` names the limit that stopped work, and the verdict is then `partial`.",
    }),
    pageUrl: z
      .string()
      .optional()
      .meta({
        description:
          "A signed link to the execution's page (the bottom line, findings, charts, mitigations, actions) for people without a " +
          "token: it expires (LINK_LIFETIME_SECONDS, default 7 days) and shows the execution as long as it is kept. Absent unless " +
          "the service has LINK_SIGNING_SECRET and PUBLIC_URL.",
      }),
    history: ExecutionHistory.optional().meta({
      description:
        "Seen before — verify: the most similar past executions of the organization (at most 3), each with what matched and what " +
        "differed, how often and when such executions happened, and what someone confirmed of them. Never changes `verdict`. " +
        "Absent when none is similar enough.",
    }),
  })
  .meta({ id: "PlaybookExecutionResult" });
export type PlaybookExecutionResult = z.infer<typeof PlaybookExecutionResult>;

/** One element per batch input, in order: a result, or `{ error }` for that item. */
export const BatchExecutionResult = z.array(PlaybookExecutionResult).meta({ id: "BatchExecutionResult" });
export type BatchExecutionResult = z.infer<typeof BatchExecutionResult>;
