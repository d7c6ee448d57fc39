import { randomUUID } from "node:crypto";
import {
  BatchExecutionInput,
  BatchExecutionResult,
  describeIssues,
  JsonText,
  PlaybookExecutionInput,
  PlaybookExecutionResult,
  RequestRefusal,
  type BatchPosition,
  type ValidationIssue,
} from "@pes/contracts";
import { integrationIssues, resolveExecution, type ResolveExecutionResult } from "@pes/playbooks";
import {
  QueueUnavailableError,
  type ExecutionClient,
  type ExecutionOutcome,
  type ExecutionRequest,
  type MessageExecutionRequest,
} from "@pes/queue";
import type { Admission } from "../admission.js";
import type { Caller } from "../auth/authenticate.js";
import { AppError } from "../errors.js";
import { prefixIssues, toValidationIssues } from "../validation.js";
import { failures } from "./responses.js";
import { organizationRoute, type Route } from "./route.js";

export interface ExecutionRouteDeps {
  executionClient: Pick<ExecutionClient, "execute" | "executeMany">;
  admission: Admission;
  executionTimeoutMs: number;
  batchMaxItems: number;
  allowedChatHosts: readonly string[];
  now: () => Date;
}

/** `POST /playbook/execution` and `POST /playbook/execution/batch`. */
export function executionRoutes(deps: ExecutionRouteDeps): Route[] {
  const resolveOptions = (now: Date) => ({ now, allowedChatHosts: deps.allowedChatHosts });

  return [
    organizationRoute({
      method: "post",
      path: "/playbook/execution",
      auth: "organization",
      body: PlaybookExecutionInput,
      operation: {
        operationId: "runPlaybook",
        summary: "Execute a playbook for one point in time at which an issue took place",
        responses: {
          200: { description: "The execution completed (possibly with `error`).", body: PlaybookExecutionResult },
          ...failures("too_many_requests"),
        },
      },
      handle: async ({ caller, body, requestId }) => {
        const resolved = resolveExecution(body, caller.org, resolveOptions(deps.now()));
        if (!resolved.ok) throw new AppError("validation", prefixIssues(resolved.issues));
        const request = executionRequest(caller, requestId, body, resolved);
        const outcome = await enqueue(() => deps.admission.run(1, () => deps.executionClient.execute(request, deps.executionTimeoutMs)));
        // What only the worker could check (the linked message) is still the caller's request: a 400.
        if (outcome instanceof RequestRefusal) throw new AppError("validation", prefixIssues(outcome.issues));
        return outcome;
      },
    }),
    organizationRoute({
      method: "post",
      path: "/playbook/execution/batch",
      auth: "organization",
      body: BatchExecutionInput,
      operation: {
        operationId: "runPlaybookBatch",
        summary: "Execute playbooks for several issues in one request",
        description:
          "One result per input, in order: a PlaybookExecutionResult, or `{ error }` for an input that is invalid. " +
          `At most ${deps.batchMaxItems} inputs.`,
        responses: {
          200: { description: "One result per input, in input order.", body: BatchExecutionResult },
          ...failures("too_many_requests"),
        },
      },
      handle: async ({ caller, body, requestId }) => {
        if (body.inputList.length > deps.batchMaxItems) {
          throw new AppError("validation", [
            { path: ["body", "inputList"], message: `inputList must hold at most ${deps.batchMaxItems} inputs` },
          ]);
        }
        // Asked of every item that does not set its own: refused once, for the envelope.
        const envelopeIssues = integrationIssues(body, caller.org);
        if (envelopeIssues.length > 0) throw new AppError("validation", prefixIssues(envelopeIssues));
        const now = deps.now();
        // Items posted to a channel go in one thread per batch and channel, a reply per item.
        const batchId = randomUUID();
        const total = body.inputList.length;
        // A bad item is that item's { error }; the valid ones go to the queue together, in one round trip.
        const results: JsonText[] = new Array<JsonText>(body.inputList.length);
        const requests: (ExecutionRequest | MessageExecutionRequest)[] = [];
        const positions: number[] = [];
        body.inputList.forEach((item, index) => {
          const parsed = PlaybookExecutionInput.safeParse(item);
          if (!parsed.success) {
            results[index] = itemError(toValidationIssues(parsed.error, []));
            return;
          }
          const input: PlaybookExecutionInput = {
            ...parsed.data,
            liveRun: parsed.data.liveRun ?? body.liveRun,
            channelId: parsed.data.channelId ?? body.channelId,
          };
          const resolved = resolveExecution(input, caller.org, resolveOptions(now));
          if (!resolved.ok) {
            results[index] = itemError(resolved.issues);
            return;
          }
          const batch = input.channelId === undefined ? undefined : { id: batchId, index, total };
          requests.push(executionRequest(caller, `${requestId}.${index}`, input, resolved, batch));
          positions.push(index);
        });
        if (requests.length > 0) {
          const outcomes = await enqueue(() =>
            deps.admission.run(requests.length, () => deps.executionClient.executeMany(requests, deps.executionTimeoutMs)),
          );
          if (outcomes.length !== requests.length) {
            throw new Error(`executeMany answered ${outcomes.length} results for ${requests.length} requests`);
          }
          outcomes.forEach((outcome, k) => {
            const position = positions[k];
            if (position !== undefined) results[position] = outcome instanceof RequestRefusal ? itemError(outcome.issues) : outcome;
          });
        }
        return JsonText.array(results);
      },
    }),
  ];
}

/**
 * The job payload: identity from the token, the issue as resolved (or, for a message link, the link the
 * worker reads), the caller's own text passed through.
 */
function executionRequest(
  caller: Caller,
  requestId: string,
  input: PlaybookExecutionInput,
  resolved: Exclude<ResolveExecutionResult, { ok: false }>,
  batch?: BatchPosition,
): ExecutionRequest | MessageExecutionRequest {
  const common = {
    orgId: caller.orgId,
    requestId,
    liveRun: input.liveRun ?? false,
    ...(input.channelId === undefined ? {} : { channelId: input.channelId }),
    ...(batch === undefined ? {} : { batch }),
  };
  if ("linked" in resolved) {
    const { messageLink, bookName } = resolved.linked;
    return { kind: "message", ...common, messageLink, ...(bookName === undefined ? {} : { bookName }) };
  }
  const { bookName, time, attributes } = resolved.value;
  const request: ExecutionRequest = { ...common, bookName, time, attributes };
  if (input.title !== undefined) request.title = input.title;
  if (input.details !== undefined) request.details = input.details;
  return request;
}

function itemError(issues: readonly ValidationIssue[]): JsonText {
  return JsonText.of({ error: describeIssues(issues) });
}

/** Redis being unreachable is the service's state, not the caller's fault: 503, not a 500. */
async function enqueue<T extends ExecutionOutcome | ExecutionOutcome[]>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof QueueUnavailableError) {
      throw new AppError("service_unavailable", "Service unavailable: the job queue cannot be reached");
    }
    throw error;
  }
}
