import {
  describeIssues,
  ErrorResponse,
  EvidenceBundle,
  ExecutionStatus,
  JsonText,
  PlaybookExecutionInput,
  PlaybookExecutionResult,
  RequestRefusal,
  type BatchPosition,
  type ValidationIssue,
} from "@pes/contracts";
import { resolveExecution, type ResolveExecutionResult } from "@pes/playbooks";
import type { ExecutionOutcome, ExecutionRequest, ExecutionView, MessageExecutionRequest } from "@pes/executions";
import { z } from "zod";
import type { Caller } from "../auth/authenticate.js";
import { callerOrganization, requestTeams, teamScopedKey } from "../auth/team-requests.js";
import { AppError } from "../errors.js";
import type { Executions } from "../executions.js";
import { prefixIssues } from "../validation.js";
import { executionIdHeader, executionRequestHeaders, idempotencyKeyOf, mayShare, prefersAsync, requestHash } from "./execution-headers.js";
import { failures } from "./responses.js";
import { HttpReply, organizationRoute, type Route } from "./route.js";

export interface ExecutionRouteDeps {
  executions: Executions;
  allowedChatHosts: readonly string[];
  now: () => Date;
}

/** Where an execution is read back; its id is a UUID (anything else is no execution: 404). */
export const EXECUTION_PATH = "/playbook/execution";
export const EXECUTION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** `POST /playbook/execution` (synchronous, or `Prefer: respond-async`) and `GET /playbook/execution/{id}`. */
export function executionRoutes(deps: ExecutionRouteDeps): Route[] {
  const resolveOptions = (now: Date) => ({ now, allowedChatHosts: deps.allowedChatHosts });

  return [
    organizationRoute({
      method: "post",
      path: EXECUTION_PATH,
      auth: "organization",
      body: PlaybookExecutionInput,
      operation: {
        operationId: "runPlaybook",
        summary: "Execute a playbook for one point in time at which an issue took place",
        description:
          "Waits for the result, unless `Prefer: respond-async` asks for a 202 at once. Identical concurrent requests (same " +
          "playbook, attributes, issue time within the same bucket, liveRun and channelId) share one execution, and a completed " +
          "result is shared for a short while after; `X-Execution-Id` names it, the same for every caller that shared it.",
        parameters: executionRequestHeaders,
        responses: {
          200: { description: "The execution completed (possibly with `error`).", body: PlaybookExecutionResult, headers: executionIdHeader },
          202: {
            description: "Accepted (`Prefer: respond-async`): read the execution at Location until it completed.",
            body: ExecutionStatus,
            headers: {
              ...executionIdHeader,
              Location: { description: "Where to read the execution: /playbook/execution/{id}.", schema: z.string() },
              "Preference-Applied": { description: "respond-async", schema: z.literal("respond-async") },
            },
          },
          ...failures("too_many_requests", "unprocessable"),
        },
      },
      handle: async ({ req, caller, body, requestId }) => {
        const resolved = resolveExecution(body, callerOrganization(caller), resolveOptions(deps.now()));
        if (!resolved.ok) throw new AppError("validation", prefixIssues(resolved.issues));
        const request = executionRequest(caller, requestId, body, resolved);
        const key = idempotencyKeyOf(req.headers);
        const options = {
          coalesce: mayShare(req.headers),
          ...(key === undefined
            ? {}
            : { idempotent: { orgId: caller.orgId, key: teamScopedKey(caller, key), requestHash: requestHash(`POST ${EXECUTION_PATH}`, body) } }),
        };

        if (prefersAsync(req.headers)) {
          const view = await deps.executions.accept(caller, request, options);
          return new HttpReply(202, statusJson(view), {
            "X-Execution-Id": view.id,
            Location: `${EXECUTION_PATH}/${view.id}`,
            "Preference-Applied": "respond-async",
          });
        }

        const answer = await deps.executions.run(caller, request, options);
        const headers = { "X-Execution-Id": answer.executionId };
        // What only the worker could check (the linked message) is still the caller's request: a 400.
        if (answer.outcome instanceof RequestRefusal) throw new AppError("validation", prefixIssues(answer.outcome.issues), headers);
        return new HttpReply(200, answer.outcome, headers);
      },
    }),
    organizationRoute({
      method: "get",
      path: `${EXECUTION_PATH}/:id`,
      auth: "organization",
      operation: {
        operationId: "getExecution",
        summary: "Read an execution back: its status, and its result once it completed",
        description:
          "Any execution of the caller's organization its teams may see (synchronous, asynchronous, batch item), for the retention time " +
          "after it finished. Another team's execution is a 404, as another organization's.",
        parameters: [{ name: "id", in: "path", description: "The execution id (X-Execution-Id, or the end of Location).", schema: z.string() }],
        responses: {
          200: { description: "The execution as it stands.", body: ExecutionStatus },
          404: {
            description: "No execution of that id the caller may see: none, another organization's or team's, or past its retention.",
            body: ErrorResponse,
          },
        },
      },
      handle: async ({ req, caller }) => {
        const { id } = req.params;
        const view = typeof id === "string" && EXECUTION_ID.test(id) ? await deps.executions.read(caller, id) : undefined;
        if (view === undefined) throw new AppError("not_found", "No such execution");
        return statusJson(view);
      },
    }),
    organizationRoute({
      method: "get",
      path: `${EXECUTION_PATH}/:id/evidence`,
      auth: "organization",
      operation: {
        operationId: "getExecutionEvidence",
        summary: "Read an execution's evidence bundle: what its actions asked and what the data sources answered",
        description:
          "Kept only for organizations whose configuration asks (`evidence.keep`), for their retention. Replay it offline with " +
          "`pes replay`. It never holds a data source's URL, credentials or headers.",
        parameters: [{ name: "id", in: "path", description: "The execution id (X-Execution-Id, or the end of Location).", schema: z.string() }],
        responses: {
          200: { description: "The execution's evidence bundle.", body: EvidenceBundle },
          404: {
            description: "No bundle of that execution the caller may see: none kept, another organization's or team's, or past its retention.",
            body: ErrorResponse,
          },
        },
      },
      handle: async ({ req, caller }) => {
        const { id } = req.params;
        const bundle = typeof id === "string" && EXECUTION_ID.test(id) ? await deps.executions.readEvidence(caller, id) : undefined;
        if (bundle === undefined) throw new AppError("not_found", "No evidence kept for such an execution");
        return bundle;
      },
    }),
  ];
}

/**
 * The job payload: identity from the token, the issue as resolved (or, for a message link, the link the
 * worker reads), the caller's own text passed through.
 */
export function executionRequest(
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
    return { kind: "message", ...common, messageLink, ...(bookName === undefined ? {} : { bookName }), teams: requestTeams(caller, bookName) };
  }
  const { bookName, time, attributes } = resolved.value;
  const request: ExecutionRequest = { ...common, bookName, time, attributes, teams: requestTeams(caller, bookName) };
  if (input.title !== undefined) request.title = input.title;
  if (input.details !== undefined) request.details = input.details;
  return request;
}

export function itemError(issues: readonly ValidationIssue[]): JsonText {
  return JsonText.of({ error: describeIssues(issues) });
}

/** An execution as `GET /playbook/execution/{id}` shows it (ExecutionStatus); the result's JSON goes in as it is. */
export function statusJson(view: ExecutionView): JsonText {
  const head = JSON.stringify({
    id: view.id,
    status: view.status,
    createdAt: view.createdAt.toISOString(),
    ...(view.completedAt === undefined ? {} : { completedAt: view.completedAt.toISOString() }),
  } satisfies ExecutionStatus);
  return withOutcome(head, view.outcome);
}

/**
 * A status's JSON object `head` with its outcome appended: `result` (the worker's JSON as it is) and,
 * for a refused request, the `issues` a synchronous caller gets as a 400.
 */
export function withOutcome(head: string, outcome: ExecutionOutcome | undefined): JsonText {
  if (outcome === undefined) return new JsonText(head);
  const tail =
    outcome instanceof RequestRefusal
      ? `"result":${JSON.stringify({ error: describeIssues(prefixIssues(outcome.issues)) })},"issues":${JSON.stringify(prefixIssues(outcome.issues))}`
      : `"result":${outcome.text}`;
  return new JsonText(`${head.slice(0, -1)},${tail}}`);
}
