import { memoryPolicyOf } from "@pes/config";
import { RequestRefusal, Verdict, type SimilarExecutions as SimilarExecutionsAnswer } from "@pes/contracts";
import type { Logger } from "@pes/logger";
import type { ExecutionMemory } from "@pes/memory";
import { z } from "zod";
import type { Caller } from "./auth/authenticate.js";
import { AppError } from "./errors.js";
import type { Executions } from "./executions.js";
import { EXECUTION_ID } from "./routes/execution-routes.js";

/** What of a stored result tells whether it has a verdict: the rest goes on unread. */
const WithVerdict = z.object({ verdict: Verdict.optional() });

/**
 * The past executions most like one execution, on request (`GET /playbook/execution/{id}/similar`, the MCP
 * tool): for the route and the in-process MCP service alike, with the same refusals.
 */
export interface SimilarExecutions {
  /**
   * The execution is read as `GET /playbook/execution/{id}` reads it (404 for none the caller may see);
   * 409 when the organization's memory is off, when it has no verdict (not finished, failed, refused), or
   * when nothing of it was remembered; else its remembered fingerprint is recalled for now, over what the
   * caller's teams may see (an admin: every team's), itself left out.
   */
  find(caller: Caller, executionId: string): Promise<SimilarExecutionsAnswer>;
}

export interface SimilarExecutionsDeps {
  executions: Executions;
  /** The memory on the API's connection; none: every organization's memory reads as off. */
  memory?: ExecutionMemory | undefined;
  logger: Logger;
}

export function createSimilarExecutions(deps: SimilarExecutionsDeps): SimilarExecutions {
  return {
    async find(caller, executionId) {
      const view = EXECUTION_ID.test(executionId) ? await deps.executions.read(caller, executionId) : undefined;
      if (view === undefined) throw new AppError("not_found", "No such execution");
      const { recall, retentionMs } = memoryPolicyOf(caller.org);
      const { memory } = deps;
      if (!recall || memory === undefined) {
        throw new AppError("conflict", "Memory is off for this organization (memory.recall in its configuration): no execution is remembered or recalled");
      }
      if (view.status === "queued" || view.status === "running") {
        throw new AppError("conflict", `The execution is ${view.status}: similar past executions are found from its verdict once it completed`);
      }
      const outcome = view.outcome;
      if (outcome === undefined || outcome instanceof RequestRefusal || verdictOf(outcome.text) === undefined) {
        throw new AppError("conflict", "The execution reached no verdict: similar past executions are found from a verdict");
      }
      return remembering(deps.logger, async () => {
        // Its record's teams read its own fingerprint: the caller was checked on the record just now.
        const fingerprint = await memory.fingerprint(caller.orgId, executionId, view.teams, retentionMs);
        if (fingerprint === undefined) {
          throw new AppError("conflict", "Nothing of this execution was remembered (it ran while memory was off, or is past the memory's retention)");
        }
        const history = await memory.recall({
          orgId: caller.orgId,
          fingerprint,
          callerTeams: caller.teams,
          everyTeam: caller.orgAdmin,
          retentionMs,
        });
        return { executionId, history };
      });
    },
  };
}

function verdictOf(resultText: string): Verdict | undefined {
  try {
    const parsed = WithVerdict.safeParse(JSON.parse(resultText));
    return parsed.success ? parsed.data.verdict : undefined;
  } catch {
    return undefined;
  }
}

/** Redis being unreachable is the service's state, not the caller's fault: 503 (the cause in the log). */
async function remembering<T>(logger: Logger, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof AppError) throw error;
    logger.warn({ err: error }, "could not read the memory of past executions");
    throw new AppError("service_unavailable", "Service unavailable: the memory of past executions cannot be read");
  }
}
