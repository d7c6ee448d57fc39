import { ErrorResponse, SimilarExecutions as SimilarExecutionsAnswer } from "@pes/contracts";
import { z } from "zod";
import type { SimilarExecutions } from "../similar-executions.js";
import { EXECUTION_PATH } from "./execution-routes.js";
import { organizationRoute, type Route } from "./route.js";

/** `GET /playbook/execution/{id}/similar`: the past executions most like one, recalled now (docs/memory.md). */
export function similarRoutes(deps: { similar: SimilarExecutions }): Route[] {
  return [
    organizationRoute({
      method: "get",
      path: `${EXECUTION_PATH}/:id/similar`,
      auth: "organization",
      operation: {
        operationId: "findSimilarExecutions",
        summary: "Find the past executions most like an execution: seen before, to verify",
        description:
          "Recalled when asked, from what was remembered of the execution (its verdict's fingerprint), over the organization's " +
          "executions the caller's teams may see (an admin: every team's), the execution itself left out: the same entries as a " +
          "result's `history`, each with what matched and what differed, how often and when, and what someone confirmed. Empty " +
          "when none is similar enough.",
        parameters: [{ name: "id", in: "path", description: "The execution id (X-Execution-Id, or the end of Location).", schema: z.string() }],
        responses: {
          200: { description: "The most similar past executions, most similar first (at most 3).", body: SimilarExecutionsAnswer },
          404: {
            description: "No execution of that id the caller may see: none, another organization's or team's, or past its retention.",
            body: ErrorResponse,
          },
          409: {
            description:
              "Nothing to recall from: the organization's memory is off (`memory.recall`), the execution has no verdict (not " +
              "finished, failed, or refused), or nothing of it was remembered (it ran while memory was off, or is past the memory's retention).",
            body: ErrorResponse,
          },
        },
      },
      handle: ({ req, caller }) => deps.similar.find(caller, typeof req.params.id === "string" ? req.params.id : ""),
    }),
  ];
}
