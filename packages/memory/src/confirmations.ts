import type { FeedbackEntry, HistoryConfirmation } from "@pes/contracts";
import type { ConfirmationLookup } from "./execution-memory.js";

/**
 * The memory's lookup of confirmed causes over the feedback store: each execution's current answer, as a
 * history entry states it (the actual cause as "kind of subject", else its text; the author by name).
 * One lookup for every reader that recalls (the worker, the API).
 */
export function confirmationsFrom(feedback: {
  confirmationsOf(orgId: string, executionIds: readonly string[]): Promise<Map<string, FeedbackEntry>>;
}): ConfirmationLookup {
  return async (orgId, executionIds) => {
    const answers = await feedback.confirmationsOf(orgId, executionIds);
    return new Map([...answers].map(([executionId, answer]) => [executionId, confirmationOf(answer)]));
  };
}

function confirmationOf({ verdict, cause, resolution, by, at }: FeedbackEntry): HistoryConfirmation {
  const named = cause?.kind === undefined ? undefined : cause.subject === undefined ? cause.kind : `${cause.kind} of ${cause.subject}`;
  const author = by?.name ?? by?.subject;
  return {
    verdict,
    ...((named ?? cause?.text) === undefined ? {} : { cause: named ?? cause?.text }),
    ...(resolution === undefined ? {} : { resolution }),
    ...(author === undefined ? {} : { by: author }),
    at,
  };
}
