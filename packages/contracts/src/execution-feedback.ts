import { z } from "zod";

/*
 * Feedback on an execution: whether its verdict named the right cause, as confirmed by someone who fixed
 * the incident, the actual cause when it did not, and what fixed it. One current answer per execution;
 * every change is kept in its history.
 */

/** Right: the verdict's own cause was the cause. Wrong: it was not (say which was, in `cause`). */
export const FEEDBACK_VERDICTS = ["right", "wrong"] as const;
export const FeedbackVerdict = z.enum(FEEDBACK_VERDICTS);
export type FeedbackVerdict = z.infer<typeof FeedbackVerdict>;

/** Longest free text of a cause or a resolution. */
export const FEEDBACK_TEXT_MAX = 2_000;

/**
 * The actual cause: a kind and subject as the verdict names causes (`deploy` / `checkout`,
 * `saturation` / `db=orders-db`: an eval case can then compare it with a verdict), or free text, or both.
 */
export const FeedbackCause = z
  .strictObject({
    kind: z.string().trim().min(1).max(100).optional().meta({ description: "A verdict cause's kind (docs/verdict.md), e.g. `deploy`." }),
    subject: z.string().trim().min(1).max(500).optional().meta({ description: "What it is about, as the verdict names subjects." }),
    text: z.string().trim().min(1).max(FEEDBACK_TEXT_MAX).optional().meta({ description: "The cause in words." }),
  })
  .superRefine((cause, ctx) => {
    if (cause.kind === undefined && cause.text === undefined)
      ctx.addIssue({ code: "custom", path: ["kind"], message: "cause needs a kind (and subject) or a text" });
    if (cause.subject !== undefined && cause.kind === undefined) ctx.addIssue({ code: "custom", path: ["kind"], message: "a cause's subject needs its kind" });
  })
  .meta({ id: "FeedbackCause" });
export type FeedbackCause = z.infer<typeof FeedbackCause>;

/** `POST /playbook/execution/{id}/feedback`. */
export const FeedbackInput = z
  .strictObject({
    verdict: FeedbackVerdict,
    cause: FeedbackCause.optional().meta({ description: "The actual cause; only with `wrong` (a right verdict's cause is its own)." }),
    resolution: z.string().trim().min(1).max(FEEDBACK_TEXT_MAX).optional().meta({ description: "What fixed it." }),
  })
  .superRefine((input, ctx) => {
    if (input.verdict === "right" && input.cause !== undefined) {
      ctx.addIssue({ code: "custom", path: ["cause"], message: "cause is the actual cause of a wrong verdict; a right verdict's cause is its own" });
    }
  })
  .meta({ id: "FeedbackInput" });
export type FeedbackInput = z.infer<typeof FeedbackInput>;

/**
 * Who said it: `api` a caller's token (`subject` its `sub`), `slack` a Slack user (`subject` the user id),
 * `link` someone holding a signed feedback link (a Teams card's button), whom the service cannot name.
 */
export const FeedbackAuthor = z
  .object({
    via: z.union([z.enum(["api", "slack", "link"]), z.string()]),
    subject: z.string().optional(),
    name: z.string().optional(),
  })
  .meta({ id: "FeedbackAuthor" });
export type FeedbackAuthor = z.infer<typeof FeedbackAuthor>;

/** One answer as it is kept: what was said, by whom, when. */
export const FeedbackEntry = z
  .object({
    verdict: FeedbackVerdict,
    cause: z.object({ kind: z.string().optional(), subject: z.string().optional(), text: z.string().optional() }).optional(),
    resolution: z.string().optional(),
    by: FeedbackAuthor.optional(),
    at: z.iso.datetime(),
  })
  .meta({ id: "FeedbackEntry" });
export type FeedbackEntry = z.infer<typeof FeedbackEntry>;

/** `GET /playbook/execution/{id}/feedback`: the current answer and every answer given, oldest first (the current last). */
export const ExecutionFeedback = z
  .object({
    executionId: z.string(),
    current: FeedbackEntry,
    history: z.array(FeedbackEntry),
  })
  .meta({ id: "ExecutionFeedback" });
export type ExecutionFeedback = z.infer<typeof ExecutionFeedback>;

/** The largest page of `GET /playbook/feedback`. */
export const FEEDBACK_PAGE_MAX = 1_000;

/** `GET /playbook/feedback` query: confirmed executions whose current answer was given at or after `since`. */
export const FeedbackListQuery = z.strictObject({
  since: z.iso.datetime({ offset: true }).optional().meta({ description: "Only answers given at or after this time (ISO 8601). Default: all kept." }),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
  limit: z.coerce.number().int().min(1).max(FEEDBACK_PAGE_MAX).default(100),
});
export type FeedbackListQuery = z.infer<typeof FeedbackListQuery>;

/** A page of the organization's confirmed executions, oldest answer first; `nextOffset` when there are more. */
export const ConfirmedExecutions = z
  .object({
    items: z.array(z.object({ executionId: z.string(), feedback: FeedbackEntry })),
    nextOffset: z.int().optional(),
  })
  .meta({ id: "ConfirmedExecutions" });
export type ConfirmedExecutions = z.infer<typeof ConfirmedExecutions>;
