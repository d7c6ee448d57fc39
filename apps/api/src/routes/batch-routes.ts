import { randomUUID } from "node:crypto";
import type { OrganizationLimits } from "@pes/config";
import {
  BatchExecutionInput,
  BatchExecutionResult,
  BatchStatus,
  JsonText,
  PlaybookExecutionInput,
  RequestRefusal,
} from "@pes/contracts";
import { integrationIssues, resolveExecution } from "@pes/playbooks";
import { batchItemId, type BatchItem, type ExecutionClient } from "@pes/queue";
import { z } from "zod";
import type { Admission } from "../admission.js";
import type { Caller } from "../auth/authenticate.js";
import { AppError } from "../errors.js";
import { prefixIssues, toValidationIssues } from "../validation.js";
import { batchJson } from "./batch-json.js";
import { batchReadRoute, type BatchReadRouteDeps } from "./batch-read-route.js";
import { executionRequestHeaders, idempotencyKeyOf, mayShare, prefersAsync, requestHash } from "./execution-headers.js";
import { claim, executionRequest, itemError, limitsOf, usingQueue } from "./execution-routes.js";
import { failures } from "./responses.js";
import { HttpReply, organizationRoute, type Route } from "./route.js";

export interface BatchRouteDeps extends BatchReadRouteDeps {
  executionClient: Pick<ExecutionClient, "executeMany" | "idempotencyKeys" | "batches">;
  admission: Admission;
  executionTimeoutMs: number;
  /** The longest inputList of a synchronous batch (BATCH_MAX_ITEMS). */
  batchMaxItems: number;
  /** The longest inputList of an async batch (ASYNC_BATCH_MAX_ITEMS). */
  asyncBatchMaxItems: number;
  /** The largest body of a batch request: a 10,000-item inputList outgrows BODY_LIMIT (ASYNC_BATCH_BODY_LIMIT). */
  bodyLimit: string;
  organizationLimits: Required<OrganizationLimits>;
  allowedChatHosts: readonly string[];
  now: () => Date;
}

const BATCH_PATH = "/playbook/execution/batch";

/** `POST /playbook/execution/batch` (synchronous, or `Prefer: respond-async`) and `GET /playbook/execution/batch/{id}`. */
export function batchRoutes(deps: BatchRouteDeps): Route[] {
  /**
   * Validates every item on its own: a bad item becomes that item's `{ error }`, the valid ones requests.
   * Items posted to a channel go in one thread per batch and channel, a reply per item.
   */
  function batchItems(caller: Caller, requestId: string, body: BatchExecutionInput, batchId: string): BatchItem[] {
    const now = deps.now();
    const total = body.inputList.length;
    return body.inputList.map((item, index): BatchItem => {
      const parsed = PlaybookExecutionInput.safeParse(item);
      if (!parsed.success) return { invalid: itemError(toValidationIssues(parsed.error, [])) };
      const input: PlaybookExecutionInput = {
        ...parsed.data,
        liveRun: parsed.data.liveRun ?? body.liveRun,
        channelId: parsed.data.channelId ?? body.channelId,
      };
      const resolved = resolveExecution(input, caller.org, { now, allowedChatHosts: deps.allowedChatHosts });
      if (!resolved.ok) return { invalid: itemError(resolved.issues) };
      const batch = input.channelId === undefined ? undefined : { id: batchId, index, total };
      return { request: executionRequest(caller, `${requestId}.${index}`, input, resolved, batch) };
    });
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
        const limits = limitsOf(caller, deps.organizationLimits);
        const key = idempotencyKeyOf(req.headers);
        const idempotent = key === undefined ? undefined : { orgId: caller.orgId, key, requestHash: requestHash(`POST ${BATCH_PATH}`, body) };
        // Item execution ids derive from it: a retry under the same key names the same executions.
        const batchId = idempotent === undefined ? randomUUID() : await claim(deps.executionClient.idempotencyKeys, idempotent);
        const items = batchItems(caller, requestId, body, batchId);
        const coalesce = mayShare(req.headers);
        // A batch larger than the organization may ever hold would be refused forever: not a 429.
        const ceiling = async ? limits.itemsQueued : limits.executionsInFlight;
        if (items.length > ceiling) throw tooLong(ceiling, " (the organization's limit)");

        if (async) {
          await usingQueue(() =>
            deps.executionClient.batches.start({ batchId, orgId: caller.orgId, items, coalesce, limit: { orgId: caller.orgId, max: limits.itemsQueued } }),
          );
          const view = await usingQueue(() => deps.executionClient.batches.read(batchId, caller.orgId, { offset: 0, limit: 0 }));
          if (view === undefined) throw new Error(`batch ${batchId} was started but cannot be read`);
          return new HttpReply(202, batchJson(view, 0), { Location: `${BATCH_PATH}/${batchId}`, "Preference-Applied": "respond-async" });
        }

        const results: JsonText[] = items.map((item) => ("invalid" in item ? item.invalid : JsonText.of({})));
        const positions = items.flatMap((item, index) => ("request" in item ? [index] : []));
        const requests = items.flatMap((item) => ("request" in item ? [item.request] : []));
        if (requests.length > 0) {
          const outcomes = await usingQueue(() =>
            deps.admission.run(requests.length, () =>
              deps.executionClient.executeMany(requests, deps.executionTimeoutMs, {
                coalesce,
                executionIds: positions.map((index) => batchItemId(batchId, index)),
                limit: { orgId: caller.orgId, max: limits.executionsInFlight },
              }),
            ),
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
    batchReadRoute(BATCH_PATH, deps),
  ];
}
