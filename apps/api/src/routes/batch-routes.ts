import { randomUUID } from "node:crypto";
import type { OrganizationLimits } from "@pes/config";
import {
  BatchExecutionInput,
  BatchExecutionResult,
  BatchStatus,
  ErrorResponse,
  JsonText,
  PlaybookExecutionInput,
  RequestRefusal,
  type BatchItemStatus,
} from "@pes/contracts";
import { integrationIssues, resolveExecution } from "@pes/playbooks";
import { batchItemId, type BatchItem, type BatchView, type ExecutionClient } from "@pes/queue";
import type { Response } from "express";
import { z } from "zod";
import type { Admission } from "../admission.js";
import type { Caller } from "../auth/authenticate.js";
import { AppError } from "../errors.js";
import { prefixIssues, toValidationIssues } from "../validation.js";
import { executionRequestHeaders, idempotencyKeyOf, mayShare, prefersAsync, requestHash } from "./execution-headers.js";
import { claim, EXECUTION_ID, executionRequest, itemError, limitsOf, usingQueue, withOutcome } from "./execution-routes.js";
import { failures } from "./responses.js";
import { ANSWERED, HttpReply, organizationRoute, type Route } from "./route.js";

export interface BatchRouteDeps {
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
  /** How often an event stream looks at its batch's progress. */
  streamIntervalMs?: number;
}

const BATCH_PATH = "/playbook/execution/batch";
/** A page of a batch's items: at most this many per read (results may be large), this many when unsaid. */
const MAX_PAGE = 1_000;
const DEFAULT_PAGE = 100;
const STREAM_INTERVAL_MS = 1_000;
/** A comment line this often keeps proxies from closing a quiet stream. */
const KEEP_ALIVE_MS = 15_000;

const PageQuery = z.object({
  offset: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(0).max(MAX_PAGE).default(DEFAULT_PAGE),
});

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
    organizationRoute({
      method: "get",
      path: `${BATCH_PATH}/:id`,
      auth: "organization",
      operation: {
        operationId: "getBatch",
        summary: "Read an async batch back: its progress, and its items' results so far, a page at a time",
        description:
          "`done` counts the items finished (with a result or an error), `failed` those that ended in an error. Items come in input " +
          `order from \`offset\`, at most \`limit\` (default ${DEFAULT_PAGE}, at most ${MAX_PAGE}) of them. With ` +
          "`Accept: text/event-stream`, a stream of server-sent events instead: `progress` (BatchStatus without items) each time it " +
          "changes, and `completed` once every item finished, which ends the stream. Kept for the batch's deadline and the retention time after.",
        parameters: [
          { name: "id", in: "path", description: "The batch id (the end of Location).", schema: z.string() },
          { name: "offset", in: "query", description: "The index of the first item to return. Default 0.", schema: z.int().min(0) },
          { name: "limit", in: "query", description: `How many items to return: 0 to ${MAX_PAGE}. Default ${DEFAULT_PAGE}.`, schema: z.int().min(0).max(MAX_PAGE) },
          { name: "Accept", in: "header", description: "`text/event-stream` for the stream of progress events.", schema: z.string() },
        ],
        responses: {
          200: {
            description: "The batch as it stands, with one page of its items.",
            body: BatchStatus,
            eventStream: "`event: progress` and, last, `event: completed`, each with a BatchStatus (without items) as `data`.",
          },
          404: {
            description: "No batch of that id for the caller's organization: none, another organization's, or past its retention.",
            body: ErrorResponse,
          },
        },
      },
      handle: async ({ req, res, caller }) => {
        const { id } = req.params;
        const batchId = typeof id === "string" && EXECUTION_ID.test(id) ? id : undefined;
        const page = PageQuery.safeParse(req.query);
        if (!page.success) throw new AppError("validation", toValidationIssues(page.error, ["query"]));
        const read = (offset: number, limit: number) =>
          batchId === undefined ? Promise.resolve(undefined) : usingQueue(() => deps.executionClient.batches.read(batchId, caller.orgId, { offset, limit }));
        const view = await read(page.data.offset, page.data.limit);
        if (view === undefined) throw new AppError("not_found", "No such batch");
        if (!acceptsEventStream(req.headers.accept)) return batchJson(view, page.data.offset);
        await streamProgress(res, view, () => read(0, 0), deps.streamIntervalMs ?? STREAM_INTERVAL_MS);
        return ANSWERED;
      },
    }),
  ];
}

/** A batch as `GET /playbook/execution/batch/{id}` shows it (BatchStatus); the items' results go in as they are. */
function batchJson(view: BatchView, offset: number): JsonText {
  const head = JSON.stringify({
    id: view.id,
    status: view.status,
    createdAt: view.createdAt.toISOString(),
    progress: view.progress,
    offset,
    items: [],
  } satisfies BatchStatus);
  const items = view.items.map((item) => {
    const status = JSON.stringify({
      index: item.index,
      ...(item.executionId === undefined ? {} : { executionId: item.executionId }),
      status: item.status,
    } satisfies BatchItemStatus);
    return withOutcome(status, item.outcome).text;
  });
  return new JsonText(`${head.slice(0, -3)}[${items.join(",")}]}`);
}

function acceptsEventStream(accept: string | undefined): boolean {
  return (accept ?? "").split(",").some((type) => type.split(";", 1)[0]?.trim().toLowerCase() === "text/event-stream");
}

/**
 * Answers with server-sent events: `progress` whenever the batch's progress changed since the last one
 * (the first at once), `completed` when every item finished, then the end. Polls the batch's records
 * (see Batches.read) every `intervalMs` while the client listens; stops when it goes away.
 */
async function streamProgress(res: Response, first: BatchView, read: () => Promise<BatchView | undefined>, intervalMs: number): Promise<void> {
  res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-store", "X-Accel-Buffering": "no" });
  let closed = false;
  res.on("close", () => {
    closed = true;
  });
  const send = (event: string, view: BatchView) => res.write(`event: ${event}\ndata: ${batchJson({ ...view, items: [] }, 0).text}\n\n`);
  let view: BatchView | undefined = first;
  let last = "";
  let quietSince = Date.now();
  try {
    while (!closed && view !== undefined) {
      if (view.status === "completed") {
        send("completed", view);
        break;
      }
      const progress = JSON.stringify(view.progress);
      if (progress !== last) {
        send("progress", view);
        last = progress;
        quietSince = Date.now();
      } else if (Date.now() - quietSince >= KEEP_ALIVE_MS) {
        res.write(": keep-alive\n\n");
        quietSince = Date.now();
      }
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
      if (!closed) view = await read();
    }
  } catch (error) {
    // Anything but Redis going away is a bug: the error middleware logs it and drops the connection.
    if (!(error instanceof AppError)) throw error;
    // The stream is open: the client learns of it from an event, not a status.
    if (!closed) res.write(`event: error\ndata: ${JSON.stringify({ error: error.message })}\n\n`);
  }
  res.end();
}
