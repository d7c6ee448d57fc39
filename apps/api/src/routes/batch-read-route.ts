import { visibleTo } from "@pes/config";
import { BatchStatus, ErrorResponse } from "@pes/contracts";
import { z } from "zod";
import type { LoadShedder } from "../load-shedder.js";
import { AppError } from "../errors.js";
import { clientGone } from "../slow-client.js";
import { toValidationIssues } from "../validation.js";
import { acceptsEventStream, streamProgress } from "./batch-event-stream.js";
import { sendBatchPage } from "./batch-page.js";
import { createBatchProgressHub, type BatchProgressListener } from "./batch-progress-hub.js";
import { wholeOrganization, type Executions } from "../executions.js";
import { EXECUTION_ID } from "./execution-routes.js";
import { failures } from "./responses.js";
import { ANSWERED, organizationRoute, type Route } from "./route.js";

export interface BatchReadRouteDeps {
  executions: Pick<Executions, "readBatch">;
  /** Pages being read and sent at once by this process; the rest wait or get 429 (see app.ts). */
  pageReads: LoadShedder;
  /** How long a client may take no bytes of a page before it is disconnected (it holds one of pageReads). */
  pageStallTimeoutMs?: number;
  /** How often an event stream's batch is read for its progress (once for every stream of that batch). */
  streamIntervalMs?: number;
  /** How long an event stream stays quiet before a comment line keeps proxies from closing it. */
  streamKeepAliveMs?: number;
}

/** A page of a batch's items: at most this many per read (results may be large), this many when unsaid. */
const MAX_PAGE = 1_000;
const DEFAULT_PAGE = 100;
const STREAM_INTERVAL_MS = 1_000;
const KEEP_ALIVE_MS = 15_000;
const PAGE_STALL_TIMEOUT_MS = 30_000;

const PageQuery = z.object({
  offset: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(0).max(MAX_PAGE).default(DEFAULT_PAGE),
});

/** `GET {path}/{id}`: an async batch's progress and a page of its items, or a stream of its progress. */
export function batchReadRoute(path: string, deps: BatchReadRouteDeps): Route {
  const { executions } = deps;
  const progress = createBatchProgressHub({
    // Shared by every watcher of the batch: what each hears is checked against its teams (below).
    read: (orgId, batchId) => executions.readBatch(wholeOrganization(orgId), batchId, { offset: 0, limit: 0 }),
    intervalMs: deps.streamIntervalMs ?? STREAM_INTERVAL_MS,
  });
  return organizationRoute({
    method: "get",
    path: `${path}/:id`,
    auth: "organization",
    operation: {
      operationId: "getBatch",
      summary: "Read an async batch back: its progress, and its items' results so far, a page at a time",
      description:
        "`done` counts the items finished (with a result or an error), `failed` those that ended in an error. Items come in input " +
        `order from \`offset\`, at most \`limit\` (default ${DEFAULT_PAGE}, at most ${MAX_PAGE}) of them. With ` +
        "`Accept: text/event-stream`, a stream of server-sent events instead: `progress` (BatchStatus without items) each time it " +
        "changes, and `completed` once every item finished, which ends the stream. Kept for the batch's deadline and the retention time after. " +
        "Pages are read a few at a time per API instance: beyond those and a short wait, 429 with Retry-After.",
      parameters: [
        { name: "id", in: "path", description: "The batch id (the end of Location).", schema: z.string() },
        { name: "offset", in: "query", description: "The index of the first item to return. Default 0.", schema: z.int().min(0) },
        {
          name: "limit",
          in: "query",
          description: `How many items to return: 0 to ${MAX_PAGE}. Default ${DEFAULT_PAGE}.`,
          schema: z.int().min(0).max(MAX_PAGE),
        },
        { name: "Accept", in: "header", description: "`text/event-stream` for the stream of progress events.", schema: z.string() },
      ],
      responses: {
        200: {
          description: "The batch as it stands, with one page of its items.",
          body: BatchStatus,
          eventStream: "`event: progress` and, last, `event: completed`, each with a BatchStatus (without items) as `data`.",
        },
        404: {
          description: "No batch of that id the caller may see: none, another organization's or team's, or past its retention.",
          body: ErrorResponse,
        },
        ...failures("too_many_requests"),
      },
    },
    handle: async ({ req, res, caller }) => {
      const { id } = req.params;
      const batchId = typeof id === "string" && EXECUTION_ID.test(id) ? id : undefined;
      const page = PageQuery.safeParse(req.query);
      if (!page.success) throw new AppError("validation", toValidationIssues(page.error, ["query"]));
      if (batchId === undefined) throw new AppError("not_found", "No such batch");
      if (acceptsEventStream(req.headers.accept)) {
        // One read per interval for every watcher of the batch: each hears it as missing unless its teams may see it.
        const watch = (listener: BatchProgressListener) =>
          progress.watch(caller.orgId, batchId, (heard) =>
            listener(heard.kind === "view" && !visibleTo(caller, heard.view.teams) ? { kind: "missing" } : heard),
          );
        await streamProgress(res, watch, deps.streamKeepAliveMs ?? KEEP_ALIVE_MS);
        return ANSWERED;
      }
      const { offset, limit } = page.data;
      return deps.pageReads.run(1, async () => {
        // It may have left while it waited its turn.
        if (clientGone(res)) return ANSWERED;
        const view = await executions.readBatch(caller, batchId, { offset, limit });
        if (view === undefined) throw new AppError("not_found", "No such batch");
        // The permit is held until the page is sent: the page's results are in memory until then.
        await sendBatchPage(res, view, offset, deps.pageStallTimeoutMs ?? PAGE_STALL_TIMEOUT_MS);
        return ANSWERED;
      });
    },
  });
}
