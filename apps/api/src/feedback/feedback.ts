import type { ConfirmedExecutions, ExecutionFeedback, FeedbackAuthor, FeedbackEntry, FeedbackInput } from "@pes/contracts";
import { QueueUnavailableError, type FeedbackStore } from "@pes/executions";
import type { ApiMetrics } from "@pes/metrics";
import { AppError } from "../errors.js";

/**
 * The API's one way to feedback, for every surface it comes from (a caller's token, a Slack button, a
 * signed link): it records the answer as the execution's current one, counts it
 * (`pes_feedback_total`), and turns Redis being away into a 503.
 */
export interface Feedback {
  /** Records an answer; undefined when the organization has no such execution (a 404 for the caller). */
  give(orgId: string, executionId: string, input: FeedbackInput, by: FeedbackAuthor | undefined): Promise<ExecutionFeedback | undefined>;
  /** The execution's current answer and history, or undefined when it has none. */
  read(orgId: string, executionId: string): Promise<ExecutionFeedback | undefined>;
  /** The organization's confirmed executions, a page at a time. */
  list(orgId: string, page: { since?: Date; offset: number; limit: number }): Promise<ConfirmedExecutions>;
}

export interface FeedbackDeps {
  store: Pick<FeedbackStore, "record" | "read" | "list">;
  metrics?: Pick<ApiMetrics, "countFeedback">;
  now: () => Date;
}

export function createFeedback(deps: FeedbackDeps): Feedback {
  return {
    give: (orgId, executionId, input, by) =>
      usingRedis(async () => {
        const entry: FeedbackEntry = {
          verdict: input.verdict,
          ...(input.cause === undefined ? {} : { cause: input.cause }),
          ...(input.resolution === undefined ? {} : { resolution: input.resolution }),
          ...(by === undefined ? {} : { by }),
          at: deps.now().toISOString(),
        };
        if (!(await deps.store.record(orgId, executionId, entry))) return undefined;
        deps.metrics?.countFeedback(orgId, entry.verdict);
        return deps.store.read(orgId, executionId);
      }),
    read: (orgId, executionId) => usingRedis(() => deps.store.read(orgId, executionId)),
    list: (orgId, page) => usingRedis(() => deps.store.list(orgId, page)),
  };
}

/** Redis being unreachable is the service's state, not the caller's fault: 503. */
async function usingRedis<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof QueueUnavailableError) throw new AppError("service_unavailable", "Service unavailable: feedback cannot be stored or read");
    throw error;
  }
}
