import { type Catalog, memoryPolicyOf } from "@pes/config";
import type { PlaybookExecutionResult } from "@pes/contracts";
import type { Logger } from "@pes/logger";
import { type ExecutionMemory, fingerprintOf } from "@pes/memory";

/** What recalling and remembering executions needs: the memory, and each organization's settings. */
export interface MemoryDeps {
  memory: ExecutionMemory;
  catalog: Catalog;
  logger: Logger;
}

/** The finished execution, as the job that ran it says. */
export interface RememberedJob {
  orgId: string;
  executionId: string;
  requestId: string;
  bookName: string;
  /** The issue time (ISO 8601). */
  time: string;
  attributes: Readonly<Record<string, string>>;
  /** The execution's teams, when it has any: it recalls what they may see, and is remembered as theirs. */
  teams?: readonly string[];
}

/**
 * Gives a finished execution's result its `history` (the most similar past executions its organization
 * and teams may see), then remembers this execution for later ones, in that order and one round trip, so
 * that it never recalls itself. Only results with a verdict take part, and only in organizations whose `memory.recall`
 * is on (memoryPolicyOf). The verdict is never changed. A Redis or lookup failure is logged and leaves the
 * result as it was: a history is worth less than the result it would delay.
 */
export async function recallAndRemember(deps: MemoryDeps | undefined, job: RememberedJob, result: PlaybookExecutionResult): Promise<PlaybookExecutionResult> {
  if (deps === undefined || result.verdict === undefined) return result;
  const { recall, retentionMs } = memoryPolicyOf(deps.catalog.organizations.get(job.orgId));
  if (!recall) return result;
  const started = performance.now();
  const fingerprint = fingerprintOf({
    executionId: job.executionId,
    playbook: job.bookName,
    at: new Date(job.time),
    attributes: job.attributes,
    verdict: result.verdict,
    ...(job.teams === undefined ? {} : { teams: job.teams }),
    ...(result.pageUrl === undefined ? {} : { pageUrl: result.pageUrl }),
  });
  let recalled = result;
  try {
    // One round trip: what it recalls is read before this execution is remembered.
    const history = await deps.memory.recallAndRemember({
      orgId: job.orgId,
      fingerprint,
      retentionMs,
      ...(job.teams === undefined ? {} : { callerTeams: job.teams }),
    });
    if (history.length > 0) recalled = { ...result, history };
  } catch (error) {
    deps.logger.warn(
      { err: error, requestId: job.requestId, jobId: job.executionId },
      "could not recall similar past executions, or remember this one; the result has no history",
    );
  }
  deps.logger.debug(
    { requestId: job.requestId, jobId: job.executionId, recalled: recalled.history?.length ?? 0, totalMs: performance.now() - started },
    "recalled similar past executions and remembered this one",
  );
  return recalled;
}
