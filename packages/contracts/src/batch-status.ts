import { z } from "zod";
import { ValidationIssue } from "./errors.js";
import { PlaybookExecutionResult } from "./execution-result.js";

/** Where a batch stands: how many of its items there are, how many finished, and how many of those failed. */
export const BatchProgress = z
  .object({
    total: z.int().nonnegative(),
    done: z.int().nonnegative().meta({ description: "Items finished, with a result or an error." }),
    failed: z.int().nonnegative().meta({ description: "Of the finished items, those that ended in an error (status `failed`)." }),
  })
  .meta({ id: "BatchProgress" });
export type BatchProgress = z.infer<typeof BatchProgress>;

/** One item of a batch read back: an execution's status (as ExecutionStatus), by its place in the batch. */
export const BatchItemStatus = z
  .object({
    index: z.int().nonnegative().meta({ description: "The item's position in inputList." }),
    executionId: z.string().optional().meta({
      description: "Its execution (GET /playbook/execution/{id}), shared with identical requests; none for an input refused at once.",
    }),
    status: z.enum(["queued", "running", "completed", "failed"]),
    result: PlaybookExecutionResult.optional().meta({ description: "Once completed: the result. Once failed: `{ error }` saying why." }),
    issues: z.array(ValidationIssue).optional().meta({ description: "When the worker refused the item (a linked message it could not use)." }),
  })
  .meta({ id: "BatchItemStatus" });
export type BatchItemStatus = z.infer<typeof BatchItemStatus>;

/**
 * An async batch read back (`GET /playbook/execution/batch/{id}`, and the body of its `202`): its
 * progress over every item, and the items of one page in input order.
 */
export const BatchStatus = z
  .object({
    id: z.string(),
    status: z.enum(["running", "completed"]).meta({ description: "`completed` once every item finished, with a result or an error." }),
    createdAt: z.iso.datetime(),
    progress: BatchProgress,
    offset: z.int().nonnegative().meta({ description: "The index of the first item of this page." }),
    items: z.array(BatchItemStatus).meta({ description: "The items from `offset`, at most `limit` of them, in input order." }),
  })
  .meta({ id: "BatchStatus" });
export type BatchStatus = z.infer<typeof BatchStatus>;
