import { encodeReply, type PlaybookExecutionResult } from "@pes/contracts";
import { finishExecution, type ExecutionOutcome } from "./execution-lifecycle.js";
import { errorResult, finishLost, readStatus, type StatusReads } from "./execution-status.js";
import type { Logger } from "pino";

/**
 * Where a job was found when its caller's deadline came without a reply: `completed` (its result was
 * stored but the message never arrived), still `queued` (and removed), `active`, `failed`, `unknown`
 * (gone without a result) or `unreadable` (Redis did not answer the look-up).
 */
export type DeadlineJobState = "completed" | "queued" | "active" | "failed" | "unknown" | "unreadable";

/** How long the look-up at a deadline may take before the caller is told Redis is unreachable. */
export const STATE_READ_TIMEOUT_MS = 1_000;

export interface DeadlineDeps extends StatusReads {
  logger: Logger;
  /** Told of the state each caller's job was found in at its deadline (metrics): quick, must not throw. */
  onReplyTimeout?: (jobState: DeadlineJobState) => void;
}

/** A caller whose deadline came without a reply. */
export interface DeadlineCall {
  executionId: string;
  orgId: string;
  /** True for the caller that created the execution: at its deadline it withdraws a job still queued. */
  created: boolean;
  timeoutMs: number;
}

interface Found {
  answer: ExecutionOutcome;
  jobState: DeadlineJobState;
}

/**
 * What to answer a caller once it waits no longer and no reply arrived: what its look-up found, or that
 * Redis is unreachable when the look-up has not decided within STATE_READ_TIMEOUT_MS. One or the other.
 */
export async function answerAtDeadline(deps: DeadlineDeps, call: DeadlineCall): Promise<ExecutionOutcome> {
  const timedOut = `Execution timed out after ${call.timeoutMs} ms`;
  const found = await oneOutcome(STATE_READ_TIMEOUT_MS, (decide) => lookUp(deps, call, timedOut, decide)).catch((error: unknown): Found => {
    deps.logger.warn({ executionId: call.executionId, err: error }, "could not read the state of a job past its deadline");
    return { answer: errorResult(`${timedOut}; its state could not be read: Redis unreachable`), jobState: "unreadable" };
  });
  deps.onReplyTimeout?.(found.jobState);
  return found.answer;
}

/**
 * The look-up's answer, or a rejection once `ms` passed before it decided. A look-up decides (calls
 * `decide`) before its first write (withdrawing the job, finishing the execution): one that comes too
 * late throws there, having changed nothing, as its caller was told Redis is unreachable; once it has
 * decided, its caller waits for what it did (each write bounded by the connection's command timeout).
 */
function oneOutcome<T>(ms: number, lookUp: (decide: () => void) => Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let decided = false;
    let abandoned = false;
    const timer = setTimeout(() => {
      abandoned = true;
      reject(new Error(`reading the job state took longer than ${ms} ms`));
    }, ms);
    const decide = () => {
      if (abandoned) throw new Error("its caller was answered already: the look-up changes nothing");
      decided = true;
      clearTimeout(timer);
    };
    lookUp(decide)
      .then(resolve, reject)
      .finally(() => {
        if (!decided) clearTimeout(timer);
      });
  });
}

/** The stored result, or the error that says what became of the job; and the state it was found in. */
async function lookUp(deps: DeadlineDeps, call: DeadlineCall, timedOut: string, decide: () => void): Promise<Found> {
  const read = await readStatus(deps, call.orgId, call.executionId);
  if (read === undefined) return { answer: errorResult("Execution result was lost"), jobState: "unknown" };
  const { record, status } = read;
  switch (status.status) {
    case "completed":
    case "failed":
      return { answer: status.outcome, jobState: record.status === "pending" ? "failed" : "completed" };
    case "running":
      return { answer: errorResult(`${timedOut} (still running)`), jobState: "active" };
    case "lost": {
      decide();
      // Finished, so that nobody joins it any longer; a reply stored just before wins.
      if ((await finishLost(deps.records, deps.keys, call.orgId, call.executionId)) === -1) {
        const stored = await readStatus(deps, call.orgId, call.executionId);
        if (stored !== undefined && "outcome" in stored.status) return { answer: stored.status.outcome, jobState: "completed" };
      }
      return { answer: errorResult("Execution result was lost"), jobState: "unknown" };
    }
    case "queued":
      return withdraw(deps, call, record.queue, timedOut, decide);
  }
}

/**
 * A job still queued at its caller's deadline: its first caller removes it, so that it never runs for
 * nobody, and finishes its execution (its joiners are told); its joiners came later, with deadlines of
 * their own, and leave it.
 */
async function withdraw(deps: DeadlineDeps, call: DeadlineCall, queueName: string, timedOut: string, decide: () => void): Promise<Found> {
  const stillQueued = { error: `${timedOut} (still queued: no worker picked it up)` } satisfies PlaybookExecutionResult;
  const queued: Found = { answer: errorResult(stillQueued.error), jobState: "queued" };
  if (!call.created) return queued;
  decide();
  // 0 means a worker locked it in the meantime.
  if ((await deps.queueNamed(queueName)?.remove(call.executionId)) === 0) return { answer: errorResult(`${timedOut} (still running)`), jobState: "active" };
  await finishExecution(deps.records, deps.keys, call.orgId, call.executionId, {
    reply: encodeReply(call.executionId, stillQueued),
    status: "failed",
    reusable: false,
  });
  return queued;
}
