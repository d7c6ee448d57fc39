import { z } from "zod";
import { ValidationIssue } from "./errors.js";
import { PlaybookExecutionResult } from "./execution-result.js";

/**
 * An execution read back (`GET /playbook/execution/{id}`, and the body of a `202`): `queued` until a
 * worker takes it, `running`, then `completed` (the worker's result, which may carry `error` as a
 * synchronous 200 does) or `failed` (no result: its job failed, its deadline passed, or the worker
 * refused the request).
 */
export const ExecutionStatus = z
  .object({
    id: z.string().meta({ description: "The execution id, as in the X-Execution-Id header." }),
    status: z.enum(["queued", "running", "completed", "failed"]),
    createdAt: z.iso.datetime(),
    completedAt: z.iso.datetime().optional(),
    result: PlaybookExecutionResult.optional().meta({
      description: "Once completed: the result. Once failed: `{ error }` saying why.",
    }),
    issues: z.array(ValidationIssue).optional().meta({
      description: "When the worker refused the request (a linked message it could not use): what a synchronous caller gets as a 400.",
    }),
  })
  .meta({ id: "ExecutionStatus" });
export type ExecutionStatus = z.infer<typeof ExecutionStatus>;
