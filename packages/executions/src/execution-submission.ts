import { randomUUID } from "node:crypto";
import { decodeReply, encodeReply, errorMessage, type ExecutionRequest, type MessageExecutionRequest } from "@pes/contracts";
import type { KeySpace, RedisConnection } from "@pes/jobs";
import { enqueueExecutions, queueOf, type ExecutionQueues } from "./execution-enqueue.js";
import { executionFingerprint } from "./execution-fingerprint.js";
import { beginExecutions, finishExecution, LimitExceededError, type Begun, type ExecutionOutcome, type LaneLimit } from "./execution-lifecycle.js";
import { errorResult } from "./execution-status.js";

type Request = ExecutionRequest | MessageExecutionRequest;

/** Which execution a request went to: one it started, or one it `joined` (identical, or the same Idempotency-Key). */
export interface SubmittedExecution {
  executionId: string;
  joined: boolean;
}

/** Identical requests share one execution (see executionFingerprint). */
export interface CoalescingSettings {
  /** Issue times in one bucket of this length are the same issue (COALESCE_BUCKET_SECONDS). */
  bucketMs: number;
  /** How long a completed execution's result is still given to newcomers (COALESCE_REUSE_SECONDS). */
  reuseMs: number;
}

/** How the requests of one call are sent on their way. */
export interface SubmissionSettings {
  /** False: start executions of their own, neither joining nor joinable. */
  coalesce?: boolean;
  /** Ids chosen beforehand, one per request; an undefined entry: a new id. */
  executionIds?: readonly (string | undefined)[];
  /** The organization's limit on the interactive lane. */
  limit?: LaneLimit;
  /** True: register this instance's reply channel, and give each request's outcome to come. */
  wait: boolean;
}

/** What a submission needs of the client: its started connections and its settings. */
export interface SubmissionDeps {
  records: RedisConnection;
  queues: ExecutionQueues;
  keys: KeySpace;
  /** This API instance (the jobs' replyTo) and its reply channel. */
  instanceId: string;
  channel: string;
  retentionMs: number;
  coalescing?: CoalescingSettings;
  onJoined?: () => void;
  /** The error for a failed enqueue (QueueUnavailableError). */
  unavailable(error: unknown): Error;
  /** The outcome to come of an execution a caller waits for: `created` when this call created it. */
  waitFor(orgId: string, executionId: string, created: boolean, timeoutMs: number): Promise<ExecutionOutcome>;
}

/**
 * Sends requests of one organization on their way: begins their executions (begin-executions.lua:
 * join or create, admit against the limit, register this instance's reply channel when `wait`) in one
 * round trip, then enqueues the jobs of the executions it created. Resolves once they are enqueued,
 * with each request's execution and, when `wait`, its outcome to come.
 */
export async function submitExecutions(
  deps: SubmissionDeps,
  requests: readonly Request[],
  timeoutMs: number,
  settings: SubmissionSettings,
): Promise<{ submitted: SubmittedExecution[]; results: Promise<ExecutionOutcome>[] }> {
  const [first] = requests;
  if (first === undefined) return { submitted: [], results: [] };
  const { orgId } = first;
  if (requests.some((request) => request.orgId !== orgId)) throw new RangeError("requests of one call must be of one organization");
  const now = Date.now();
  const deadline = now + Math.ceil(timeoutMs);
  const coalesce = settings.coalesce === false ? undefined : deps.coalescing;
  const answer = await beginExecutions(
    deps.records,
    deps.keys,
    {
      orgId,
      lane: "interactive",
      deadline,
      ttlMs: timeoutMs + deps.retentionMs,
      retainMs: deps.retentionMs,
      reuseMs: coalesce?.reuseMs ?? 0,
      ...(settings.limit === undefined ? {} : { limit: settings.limit }),
      ...(settings.wait ? { waiterChannel: deps.channel } : {}),
      ...(settings.limit?.over === "behind" ? { behindQueue: deps.queues.behind.name } : {}),
    },
    requests.map((request, k) => ({
      candidateId: settings.executionIds?.[k] ?? randomUUID(),
      queue: queueOf(request, deps.queues).name,
      ...(coalesce === undefined ? {} : { fingerprint: executionFingerprint(request, coalesce.bucketMs, now) }),
      ...(request.teams === undefined ? {} : { teams: request.teams }),
    })),
  ).catch((error: unknown) => {
    throw error instanceof LimitExceededError ? error : deps.unavailable(error);
  });
  await enqueue(deps, requests, answer.executions, { deadline, behind: answer.behind, orgId });
  const submitted = answer.executions.map((begun): SubmittedExecution => {
    if (begun.state !== "created") deps.onJoined?.();
    return { executionId: begun.executionId, joined: begun.state !== "created" };
  });
  const results = settings.wait ? answer.executions.map((begun) => outcomeOf(deps, begun, orgId, timeoutMs)) : [];
  return { submitted, results };
}

/** The outcome a waiting caller gets: the stored reply of one that had finished, else the one to come. */
function outcomeOf(deps: SubmissionDeps, begun: Begun, orgId: string, timeoutMs: number): Promise<ExecutionOutcome> {
  if (begun.state === "completed" || begun.state === "failed") {
    return Promise.resolve(decodeReply(begun.reply)?.result ?? errorResult("Execution result was unreadable"));
  }
  return deps.waitFor(orgId, begun.executionId, begun.state === "created", timeoutMs);
}

/**
 * Enqueues the jobs of the executions a call created. When that fails, the executions are finished with
 * the error, so that their joiners are told and an identical request starts afresh.
 */
async function enqueue(
  deps: SubmissionDeps,
  part: readonly Request[],
  begun: readonly Begun[],
  call: { deadline: number; behind: boolean; orgId: string },
): Promise<void> {
  const created = begun.flatMap((execution, k) => {
    const request = part[k];
    return execution.state === "created" && request !== undefined ? [{ request, executionId: execution.executionId }] : [];
  });
  if (created.length === 0) return;
  try {
    await enqueueExecutions(deps.queues, created, { replyTo: deps.instanceId, deadline: call.deadline, behind: call.behind });
  } catch (error) {
    const notEnqueued = { error: `Execution could not be enqueued: ${errorMessage(error)}` };
    const finish = ({ executionId }: { executionId: string }) =>
      finishExecution(deps.records, deps.keys, call.orgId, executionId, { reply: encodeReply(executionId, notEnqueued), status: "failed", reusable: false });
    await Promise.all(created.map(finish)).catch(() => undefined);
    throw deps.unavailable(error);
  }
}
