import type { EvidenceBundle, ExecutionStatus, PlaybookExecutionInput, PlaybookList, SimilarExecutions } from "@pes/contracts";

/**
 * What the MCP tools ask of the service, for the organization of whoever called: the API implements it
 * in-process with the functions its routes use (apps/api/src/mcp), `pes mcp` over the HTTP API with the
 * user's token (packages/client). A failure the caller should see throws a {@link ToolError}.
 */
export interface PesService {
  /** The organization's playbooks (`GET /playbook`). */
  listPlaybooks(): Promise<PlaybookList>;
  /** Runs an investigation through the queue and waits for it (`POST /playbook/execution`): the execution as it then stands. */
  investigate(input: PlaybookExecutionInput): Promise<ExecutionStatus>;
  /** An execution of the organization (`GET /playbook/execution/{id}`). */
  readExecution(executionId: string): Promise<ExecutionStatus>;
  /** The evidence bundle kept for an execution of the organization (`GET /playbook/execution/{id}/evidence`). */
  readEvidence(executionId: string): Promise<EvidenceBundle>;
  /** The past executions most like an execution of the organization, recalled now (`GET /playbook/execution/{id}/similar`). */
  findSimilar(executionId: string): Promise<SimilarExecutions>;
}

/**
 * A failure a tool reports to the model as it is: the same message the HTTP API answers (a refusal, a
 * validation issue, "No such execution"), never internals. Anything else a tool throws is reported as
 * an internal error, its details only to the server's own log.
 */
export class ToolError extends Error {
  override name = "ToolError";
}
