import { ConfirmedExecutions, ErrorResponse, ExecutionFeedback, FeedbackInput, FeedbackListQuery } from "@pes/contracts";
import { z } from "zod";
import { AppError } from "../errors.js";
import type { Feedback } from "../feedback/feedback.js";
import { EXECUTION_ID, EXECUTION_PATH } from "./execution-routes.js";
import { organizationRoute, type Route } from "./route.js";

/** Where an organization's confirmed executions are listed. */
export const FEEDBACK_LIST_PATH = "/playbook/feedback";

const idParameter = { name: "id", in: "path", description: "The execution id (X-Execution-Id, or the end of Location).", schema: z.string() } as const;
const noExecution = {
  description: "No execution of that id in the caller's organization (unknown, another organization's, or past its retention).",
  body: ErrorResponse,
};

/**
 * Answers on an execution's verdict by the people who fixed the incident: `POST` and `GET
 * /playbook/execution/{id}/feedback`, and `GET /playbook/feedback` (the organization's confirmed
 * executions, for `pes eval --confirmed`). Who answered is the token's subject.
 */
export function feedbackRoutes(deps: { feedback: Feedback }): Route[] {
  return [
    organizationRoute({
      method: "post",
      path: `${EXECUTION_PATH}/:id/feedback`,
      auth: "organization",
      body: FeedbackInput,
      operation: {
        operationId: "giveExecutionFeedback",
        summary: "Say whether an execution's verdict named the right cause, what the cause was and what fixed it",
        description:
          "The answer becomes the execution's current one; earlier answers stay in its history. Who answered is the token's `sub`. " +
          "Kept as long as the execution's record or its evidence bundle.",
        parameters: [idParameter],
        responses: {
          200: { description: "The execution's feedback, the new answer current.", body: ExecutionFeedback },
          404: noExecution,
        },
      },
      handle: async ({ req, caller, body }) => {
        const id = executionIdOf(req.params.id);
        const given = await deps.feedback.give(caller.orgId, id, body, {
          via: "api",
          ...(caller.subject === undefined ? {} : { subject: caller.subject }),
        });
        if (given === undefined) throw new AppError("not_found", "No such execution");
        return given;
      },
    }),
    organizationRoute({
      method: "get",
      path: `${EXECUTION_PATH}/:id/feedback`,
      auth: "organization",
      operation: {
        operationId: "getExecutionFeedback",
        summary: "Read an execution's feedback: the current answer and every answer given",
        parameters: [idParameter],
        responses: {
          200: { description: "The current answer and the history, oldest first (the current last).", body: ExecutionFeedback },
          404: { ...noExecution, description: `${noExecution.description} Or no answer given on it.` },
        },
      },
      handle: async ({ req, caller }) => {
        const found = await deps.feedback.read(caller.orgId, executionIdOf(req.params.id));
        if (found === undefined) throw new AppError("not_found", "No feedback on such an execution");
        return found;
      },
    }),
    organizationRoute({
      method: "get",
      path: FEEDBACK_LIST_PATH,
      auth: "organization",
      query: FeedbackListQuery,
      operation: {
        operationId: "listConfirmedExecutions",
        summary: "List the organization's executions with feedback, oldest answer first",
        description: "Each with its current answer. Page with `offset` (the answer's `nextOffset`) while `nextOffset` is present.",
        responses: { 200: { description: "A page of confirmed executions.", body: ConfirmedExecutions } },
      },
      handle: ({ caller, query }) =>
        deps.feedback.list(caller.orgId, {
          ...(query.since === undefined ? {} : { since: new Date(query.since) }),
          offset: query.offset,
          limit: query.limit,
        }),
    }),
  ];
}

/** A well-formed execution id, or a 404 (as an unknown one: an id is never a validation error). */
function executionIdOf(id: unknown): string {
  if (typeof id !== "string" || !EXECUTION_ID.test(id)) throw new AppError("not_found", "No such execution");
  return id;
}
