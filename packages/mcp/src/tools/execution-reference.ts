import { z } from "zod";

/** The input of the tools that read an execution back: its id, as the HTTP API's path parameter. */
export const ExecutionReference = z.strictObject({
  executionId: z.string().meta({ description: "The execution id: the `id` investigate_issue answered (X-Execution-Id in the HTTP API)." }),
});
