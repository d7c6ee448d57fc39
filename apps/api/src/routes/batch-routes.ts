import { setImmediate as nextTurn } from "node:timers/promises";
import { BatchExecutionInput, BatchExecutionResult, BatchStatus, JsonText, PlaybookExecutionInput, RequestRefusal } from "@pes/contracts";
import { integrationIssues, resolveExecution } from "@pes/playbooks";
import type { BatchItem } from "@pes/executions";
import { z } from "zod";
import type { Caller } from "../auth/authenticate.js";
import { callerOrganization, teamScopedKey } from "../auth/team-requests.js";
import { AppError } from "../errors.js";
import type { Executions } from "../executions.js";
import { prefixIssues, toValidationIssues } from "../validation.js";
import { batchJson } from "./batch-json.js";
import { batchReadRoute, type BatchReadRouteDeps } from "./batch-read-route.js";
import { executionRequestHeaders, idempotencyKeyOf, mayShare, prefersAsync, requestHash } from "./execution-headers.js";
import { executionRequest, itemError } from "./execution-routes.js";
import { failures } from "./responses.js";
import { HttpReply, organizationRoute, type Route } from "./route.js";

export interface BatchRouteDeps extends BatchReadRouteDeps {
  executions: Executions;
  /** The longest inputList of a synchronous batch (BATCH_MAX_ITEMS). */
  batchMaxItems: number;
  /** The longest inputList of an async batch (ASYNC_BATCH_MAX_ITEMS). */
  asyncBatchMaxItems: number;
  /** The largest body of a batch request: a 10,000-item inputList outgrows BODY_LIMIT (ASYNC_BATCH_BODY_LIMIT). */
  bodyLimit: string;
  allowedChatHosts: readonly string[];
  now: () => Date;
}

const BATCH_PATH = "/playbook/execution/batch";
/** Inputs validated in one turn of the event loop: a 10,000-item batch is taken in without holding it. */
const ITEMS_PER_TURN = 250;

/** `POST /playbook/execution/batch` (synchronous, or `Prefer: respond-async`) and `GET /playbook/execution/batch/{id}`. */
export function batchRoutes(deps: BatchRouteDeps): Route[] {
  /**
   * Validates every item on its own: a bad item becomes that item's `{ error }`, the valid ones requests.
   * Items posted to a channel go in one thread per batch and channel, a reply per item (posted before the
   * item is answered when `callerWaits`). A turn of the event loop at a time, so that other callers are
   * answered while a large batch is taken in.
   */
  async function batchItems(caller: Caller, requestId: string, body: BatchExecutionInput, batchId: string, callerWaits: boolean): Promise<BatchItem[]> {
    const now = deps.now();
    const total = body.inputList.length;
    const organization = callerOrganization(caller);
    const item = (index: number): BatchItem => {
      const parsed = PlaybookExecutionInput.safeParse(body.inputList[index]);
      if (!parsed.success) return { invalid: itemError(toValidationIssues(parsed.error, [])) };
      const input: PlaybookExecutionInput = {
        ...parsed.data,
        liveRun: parsed.data.liveRun ?? body.liveRun,
        channelId: parsed.data.channelId ?? body.channelId,
      };
      const resolved = resolveExecution(input, organization, { now, allowedChatHosts: deps.allowedChatHosts });
      if (!resolved.ok) return { invalid: itemError(resolved.issues) };
      const batch = input.channelId === undefined ? undefined : { id: batchId, index, total, ...(callerWaits ? { callerWaits } : {}) };
      return { request: executionRequest(caller, `${requestId}.${index}`, input, resolved, batch) };
    };
    const items: BatchItem[] = [];
    for (let index = 0; index < total; index += 1) {
      if (index > 0 && index % ITEMS_PER_TURN === 0) await nextTurn();
      items.push(item(index));
    }
    return items;
  }

  function tooLong(max: number, what: string): AppError {
    return new AppError("validation", [{ path: ["body", "inputList"], message: `inputList must hold at most ${max} inputs${what}` }]);
  }

  return [
    organizationRoute({
      method: "post",
      path: BATCH_PATH,
      auth: "organization",
      body: BatchExecutionInput,
      bodyLimit: deps.bodyLimit,
      operation: {
        operationId: "runPlaybookBatch",
        summary: "Execute playbooks for several issues in one request",
        description:
          "One result per input, in order: a PlaybookExecutionResult, or `{ error }` for an input that is invalid. " +
          `At most ${deps.batchMaxItems} inputs; with \`Prefer: respond-async\`, at most ${deps.asyncBatchMaxItems}, answered 202 at once ` +
          "with a Location to read the batch from. Items share executions with identical requests, as single executions do; " +
          "an async batch's items run after every other caller's executions (they never make one wait).",
        parameters: executionRequestHeaders,
        responses: {
          200: { description: "One result per input, in input order.", body: BatchExecutionResult },
          202: {
            description: "Accepted (`Prefer: respond-async`): read the batch at Location until it completed.",
            body: BatchStatus,
            headers: {
              Location: { description: "Where to read the batch: /playbook/execution/batch/{id}.", schema: z.string() },
              "Preference-Applied": { description: "respond-async", schema: z.literal("respond-async") },
            },
          },
          ...failures("too_many_requests", "unprocessable"),
        },
      },
      handle: async ({ req, caller, body, requestId }) => {
        const async = prefersAsync(req.headers);
        const max = async ? deps.asyncBatchMaxItems : deps.batchMaxItems;
        if (body.inputList.length > max) throw tooLong(max, async ? "" : " (more with Prefer: respond-async)");
        // Asked of every item that does not set its own: refused once, for the envelope.
        const envelopeIssues = integrationIssues(body, caller.org);
        if (envelopeIssues.length > 0) throw new AppError("validation", prefixIssues(envelopeIssues));
        const key = idempotencyKeyOf(req.headers);
        const options = {
          coalesce: mayShare(req.headers),
          ...(key === undefined
            ? {}
            : { idempotent: { orgId: caller.orgId, key: teamScopedKey(caller, key), requestHash: requestHash(`POST ${BATCH_PATH}`, body) } }),
        };
        const items = (batchId: string) => batchItems(caller, requestId, body, batchId, !async);

        if (async) {
          const view = await deps.executions.startBatch(caller, options, items);
          return new HttpReply(202, batchJson(view, 0), { Location: `${BATCH_PATH}/${view.id}`, "Preference-Applied": "respond-async" });
        }
        const outcomes = await deps.executions.runBatch(caller, options, items);
        return JsonText.array(outcomes.map((outcome) => (outcome instanceof RequestRefusal ? itemError(outcome.issues) : outcome)));
      },
    }),
    batchReadRoute(BATCH_PATH, deps),
  ];
}
