import { ExecutionStatus, RequestRefusal, type EvidenceBundle } from "@pes/contracts";
import type { PesService } from "@pes/mcp";
import { resolveExecution } from "@pes/playbooks";
import type { Caller } from "../auth/authenticate.js";
import { callerOrganization } from "../auth/team-requests.js";
import { AppError } from "../errors.js";
import type { Executions } from "../executions.js";
import type { SimilarExecutions } from "../similar-executions.js";
import { EXECUTION_ID, executionRequest, statusJson } from "../routes/execution-routes.js";
import { prefixIssues } from "../validation.js";

export interface OrganizationServiceDeps {
  executions: Executions;
  similar: SimilarExecutions;
  allowedChatHosts: readonly string[];
  now: () => Date;
}

/**
 * The MCP tools' service for one authenticated caller, in-process: the functions `POST /playbook/execution`,
 * `GET /playbook/execution/{id}` and its evidence and similar routes call, with the same refusals. `refuse` turns an
 * AppError's message (what the HTTP API answers as `error`) into the tool error the model reads.
 */
export function organizationService(deps: OrganizationServiceDeps, caller: Caller, requestId: string, refuse: (message: string) => Error): PesService {
  async function answering<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw error instanceof AppError ? refuse(error.message) : error;
    }
  }

  async function readExecution(executionId: string): Promise<ExecutionStatus> {
    const view = EXECUTION_ID.test(executionId) ? await deps.executions.read(caller, executionId) : undefined;
    if (view === undefined) throw new AppError("not_found", "No such execution");
    return ExecutionStatus.parse(JSON.parse(statusJson(view).text));
  }

  return {
    listPlaybooks: async () => [...callerOrganization(caller).playbookList],

    investigate: (input) =>
      answering(async () => {
        const resolved = resolveExecution(input, callerOrganization(caller), { now: deps.now(), allowedChatHosts: deps.allowedChatHosts });
        if (!resolved.ok) throw new AppError("validation", prefixIssues(resolved.issues));
        const request = executionRequest(caller, requestId, input, resolved);
        const answer = await deps.executions.run(caller, request, { coalesce: true });
        if (answer.outcome instanceof RequestRefusal) throw new AppError("validation", prefixIssues(answer.outcome.issues));
        return readExecution(answer.executionId);
      }),

    readExecution: (executionId) => answering(() => readExecution(executionId)),

    readEvidence: (executionId) =>
      answering(async (): Promise<EvidenceBundle> => {
        const bundle = EXECUTION_ID.test(executionId) ? await deps.executions.readEvidence(caller, executionId) : undefined;
        if (bundle === undefined) throw new AppError("not_found", "No evidence kept for such an execution");
        return bundle;
      }),

    findSimilar: (executionId) => answering(() => deps.similar.find(caller, executionId)),
  };
}
