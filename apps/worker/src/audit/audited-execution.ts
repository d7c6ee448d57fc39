import type { Catalog } from "@pes/config";
import {
  errorMessage,
  type RequestRefusal,
  type AuditSentRequest,
  type ExecutionJob,
  type MessageExecutionJob,
  type PlaybookExecutionResult,
} from "@pes/contracts";
import type { Engine, Investigation } from "@pes/engine";
import type { AuditTrail } from "@pes/executions";
import type { Logger } from "@pes/logger";
import { auditRecordOf, type RunEnding } from "./audit-record.js";
import type { JsonLinesSink } from "./json-lines-sink.js";
import { recordOutbound, type OutboundDestination } from "./outbound-requests.js";

/** Where the worker writes executions' audit records. */
export interface AuditDeps {
  trail: Pick<AuditTrail, "append">;
  /** AUDIT_RETENTION_DAYS. */
  retentionDays: number;
  /** AUDIT_LOG_FILE: a line per record there too. */
  sink?: JsonLinesSink;
  /** The services an organization's executions send to (auditDestinations). */
  destinations(orgId: string): readonly OutboundDestination[];
  catalog: Catalog;
  logger: Logger;
  now?: () => Date;
}

type Outcome = PlaybookExecutionResult | RequestRefusal;

/**
 * Runs one execution (`run`, given the engine to run it with) and appends its audit record when it
 * finishes, whatever the ending: a result, a refusal, a throw, its deadline. The engine handed to `run`
 * tells the record which execution ran and every query it sent; the HTTP requests it makes to the
 * organization's chat, incident and model services are recorded as they leave (recordOutbound). A job
 * stopped because the worker shuts down is handed back to the queue and recorded by the run that
 * finishes it. Writing the record never fails the execution: a failure is logged.
 */
export async function auditedExecution<O extends Outcome>(
  deps: AuditDeps | undefined,
  engine: Pick<Engine, "investigate">,
  job: ExecutionJob | MessageExecutionJob,
  context: { jobId: string; signal: AbortSignal },
  run: (engine: Pick<Engine, "investigate">) => Promise<O>,
): Promise<O> {
  if (deps === undefined) return run(engine);
  const seen: { ran?: ExecutionJob; investigation?: Investigation } = {};
  const watched: Pick<Engine, "investigate"> = {
    investigate: async (execution, signal, executionId) => {
      seen.ran = execution;
      const investigation = await engine.investigate(execution, signal, executionId);
      seen.investigation = investigation;
      return investigation;
    },
  };
  const sent: AuditSentRequest[] = [];
  let ending: RunEnding;
  try {
    const value = await recordOutbound(deps.destinations(job.orgId), sent, () => run(watched));
    ending = stoppedBy(context.signal) ? { kind: "stopped", value } : { kind: "returned", value };
    await write(deps, job, context.jobId, ending, seen, sent, context.signal);
    return value;
  } catch (error) {
    ending = stoppedBy(context.signal) ? { kind: "stopped", error: errorMessage(error) } : { kind: "threw", error: errorMessage(error) };
    await write(deps, job, context.jobId, ending, seen, sent, context.signal);
    throw error;
  }
}

/** The job was stopped by its deadline or its attempt's timeout (not by a shutdown, which hands it back). */
function stoppedBy(signal: AbortSignal): boolean {
  return signal.aborted && signal.reason instanceof DOMException && signal.reason.name === "TimeoutError";
}

async function write(
  deps: AuditDeps,
  job: ExecutionJob | MessageExecutionJob,
  executionId: string,
  ending: RunEnding,
  seen: { ran?: ExecutionJob; investigation?: Investigation },
  sent: readonly AuditSentRequest[],
  signal: AbortSignal,
): Promise<void> {
  // Shutting down: the job goes back to the queue, and its next run is the one that finishes it.
  if (signal.aborted && !stoppedBy(signal)) return;
  const bookName = seen.ran?.bookName ?? job.bookName;
  const playbook = bookName === undefined ? undefined : deps.catalog.organizations.get(job.orgId)?.playbooks.get(bookName);
  const audit = seen.investigation?.audit;
  const record = auditRecordOf({
    executionId,
    job,
    ...(seen.ran === undefined ? {} : { ran: seen.ran }),
    ...(playbook === undefined ? {} : { playbook }),
    ending,
    queries: audit?.queries ?? [],
    sent,
    ...(audit?.evidenceSha256 === undefined ? {} : { evidenceSha256: audit.evidenceSha256 }),
    finishedAt: deps.now?.() ?? new Date(),
  });
  const log = { orgId: job.orgId, requestId: job.requestId, executionId };
  const appended = await deps.trail.append(record, { retentionDays: deps.retentionDays }).catch((error: unknown) => {
    deps.logger.error({ ...log, err: error }, "could not append the execution's audit record");
    // Redis may be away: the file still gets the line.
    return true;
  });
  if (!appended) {
    deps.logger.info(log, "the execution's audit record was appended by an earlier run of its job");
    return;
  }
  if (deps.sink !== undefined) {
    await deps.sink.write(record).catch((error: unknown) => deps.logger.error({ ...log, err: error }, "could not write the audit record to AUDIT_LOG_FILE"));
  }
}
