import { randomUUID } from "node:crypto";
import type { OrganizationLimits } from "@pes/config";
import { JsonText, type ChartData, type EvidenceBundle } from "@pes/contracts";
import {
  batchItemIds,
  LimitExceededError,
  QueueUnavailableError,
  type BatchItem,
  type BatchPage,
  type BatchView,
  type ChartStore,
  type EvidenceStore,
  type ExecutionAnswer,
  type ExecutionClient,
  type ExecutionOutcome,
  type ExecutionRequest,
  type ExecutionView,
  type IdempotentRequest,
  type MessageExecutionRequest,
  type SubmittedExecution,
} from "@pes/executions";
import type { LoadShedder } from "./load-shedder.js";
import type { Caller } from "./auth/authenticate.js";
import { AppError } from "./errors.js";

type Request = ExecutionRequest | MessageExecutionRequest;

/** What a caller asked of how its request runs: an Idempotency-Key, and whether it may share (Cache-Control). */
export interface RunOptions {
  idempotent?: IdempotentRequest;
  coalesce: boolean;
}

/**
 * The API's one way to executions, for every route that starts or reads them: it claims the
 * Idempotency-Key, applies the organization's limits and this process's load shedding, submits through
 * the execution client (which coalesces), binds the key to the execution it went to, and turns the
 * queue's refusals into HTTP answers (503 when Redis is unreachable, 429 with Retry-After over a limit).
 */
export interface Executions {
  /** Runs one execution, or joins an identical one, and waits for it (`POST /playbook/execution`). */
  run(caller: Caller, request: Request, options: RunOptions): Promise<ExecutionAnswer>;
  /** Starts one without waiting (`Prefer: respond-async`): the execution as it stands right after. */
  accept(caller: Caller, request: Request, options: RunOptions): Promise<ExecutionView>;
  /**
   * Runs a synchronous batch's items and waits for them all: outcomes in item order (an invalid item's is
   * its `{ error }`). Its id (the key's, when idempotent) names its items' executions, so that a retry joins them.
   */
  runBatch(caller: Caller, options: RunOptions, items: (batchId: string) => Promise<readonly BatchItem[]>): Promise<ExecutionOutcome[]>;
  /** Starts an async batch (`Prefer: respond-async`); its items are built for the batch's id. */
  startBatch(caller: Caller, options: RunOptions, items: (batchId: string) => Promise<readonly BatchItem[]>): Promise<BatchView>;
  /**
   * Starts the investigations of firing alerts under ids of their own (an alert's occurrence: a re-sent
   * alert joins its investigation). Over the organization's limit they are queued behind every other
   * caller's work, never refused: an alerting pipeline drops what it is refused.
   */
  acceptAlerts(caller: Caller, requests: readonly ExecutionRequest[], executionIds: readonly string[]): Promise<SubmittedExecution[]>;
  /** An execution of the organization, or undefined. */
  read(orgId: string, executionId: string): Promise<ExecutionView | undefined>;
  /** A batch of the organization with a page of its items, or undefined. Its progress costs one read, whatever its size. */
  readBatch(orgId: string, batchId: string, page: BatchPage): Promise<BatchView | undefined>;
  /** The evidence bundle kept for an execution of the organization, or undefined (none kept, or no store). */
  readEvidence(orgId: string, executionId: string): Promise<EvidenceBundle | undefined>;
  /** The data of an execution's charts by action index (empty: none drawn, gone, or no store). */
  readCharts(orgId: string, executionId: string): Promise<Map<number, ChartData>>;
}

export interface ExecutionsDeps {
  client: Pick<ExecutionClient, "execute" | "executeMany" | "submit" | "read" | "idempotencyKeys" | "batches">;
  /** This process's bound on executions waited for at once (MAX_IN_FLIGHT). */
  loadShedder: LoadShedder;
  executionTimeoutMs: number;
  /** The limits of an organization that sets none of its own (ORG_EXECUTIONS_IN_FLIGHT, ORG_ITEMS_QUEUED). */
  organizationLimits: Required<OrganizationLimits>;
  /** Where executions' evidence bundles are kept; none: no execution has one. */
  evidence?: Pick<EvidenceStore, "read">;
  /** Where executions' charts are kept; none: no execution has one. */
  charts?: Pick<ChartStore, "read">;
}

export function createExecutions(deps: ExecutionsDeps): Executions {
  const { client } = deps;
  const limitsOf = (caller: Caller): Required<OrganizationLimits> => ({ ...deps.organizationLimits, ...caller.org.limits });

  /** The id an Idempotency-Key stands for: a new one for its first request; 422 for another request. */
  async function claim(idempotent: IdempotentRequest | undefined): Promise<string | undefined> {
    if (idempotent === undefined) return undefined;
    const claimed = await client.idempotencyKeys.claim(idempotent, randomUUID());
    if ("mismatch" in claimed) throw new AppError("unprocessable", "Idempotency-Key was already used with another request");
    return claimed.id;
  }

  /** Points the key at the execution its request joined, when that is not the one it claimed. */
  async function bind(idempotent: IdempotentRequest | undefined, claimedId: string | undefined, executionId: string): Promise<void> {
    if (idempotent !== undefined && claimedId !== executionId) await client.idempotencyKeys.bind(idempotent, executionId);
  }

  /** A batch larger than the organization may ever hold would be refused forever: not a 429. */
  function withinCeiling(count: number, ceiling: number): void {
    if (count > ceiling) {
      throw new AppError("validation", [{ path: ["body", "inputList"], message: `inputList must hold at most ${ceiling} inputs (the organization's limit)` }]);
    }
  }

  return {
    run: (caller, request, options) =>
      usingQueue(async () => {
        const claimedId = await claim(options.idempotent);
        const answer = await deps.loadShedder.run(1, () =>
          client.execute(request, deps.executionTimeoutMs, {
            coalesce: options.coalesce,
            limit: { max: limitsOf(caller).executionsInFlight },
            ...(claimedId === undefined ? {} : { executionId: claimedId }),
          }),
        );
        await bind(options.idempotent, claimedId, answer.executionId);
        return answer;
      }),

    accept: (caller, request, options) =>
      usingQueue(async () => {
        const claimedId = await claim(options.idempotent);
        const [submitted] = await client.submit([request], {
          coalesce: options.coalesce,
          executionIds: [claimedId],
          limit: { max: limitsOf(caller).executionsInFlight },
        });
        if (submitted === undefined) throw new Error("submit answered no execution for one request");
        await bind(options.idempotent, claimedId, submitted.executionId);
        const { executionId } = submitted;
        return (await client.read(caller.orgId, executionId)) ?? { id: executionId, status: "queued", createdAt: new Date() };
      }),

    runBatch: (caller, options, itemsFor) =>
      usingQueue(async () => {
        // Item execution ids derive from the batch's: a retry under the same key names the same executions.
        const batchId = (await claim(options.idempotent)) ?? randomUUID();
        const items = await itemsFor(batchId);
        const { executionsInFlight } = limitsOf(caller);
        withinCeiling(items.length, executionsInFlight);
        const outcomes: ExecutionOutcome[] = items.map((item) => ("invalid" in item ? item.invalid : JsonText.of({})));
        const positions = items.flatMap((item, index) => ("request" in item ? [index] : []));
        const requests = items.flatMap((item) => ("request" in item ? [item.request] : []));
        if (requests.length === 0) return outcomes;
        const answered = await deps.loadShedder.run(requests.length, () =>
          client.executeMany(requests, deps.executionTimeoutMs, {
            coalesce: options.coalesce,
            executionIds: positions.map(batchItemIds(batchId)),
            limit: { max: executionsInFlight },
          }),
        );
        answered.forEach((outcome, k) => {
          const position = positions[k];
          if (position !== undefined) outcomes[position] = outcome;
        });
        return outcomes;
      }),

    startBatch: (caller, options, itemsFor) =>
      usingQueue(async () => {
        const batchId = (await claim(options.idempotent)) ?? randomUUID();
        const items = await itemsFor(batchId);
        const { itemsQueued } = limitsOf(caller);
        withinCeiling(items.length, itemsQueued);
        await client.batches.start({ batchId, orgId: caller.orgId, items, coalesce: options.coalesce, limit: { max: itemsQueued } });
        const view = await client.batches.read(caller.orgId, batchId, { offset: 0, limit: 0 });
        if (view === undefined) throw new Error(`batch ${batchId} was started but cannot be read`);
        return view;
      }),

    acceptAlerts: (caller, requests, executionIds) =>
      usingQueue(() =>
        client.submit(requests, {
          coalesce: true,
          executionIds,
          limit: { max: limitsOf(caller).executionsInFlight, over: "behind" },
        }),
      ),

    read: (orgId, executionId) => usingQueue(() => client.read(orgId, executionId)),
    readEvidence: (orgId, executionId) => {
      const store = deps.evidence;
      return store === undefined ? Promise.resolve(undefined) : usingQueue(() => store.read(orgId, executionId));
    },

    readCharts: (orgId, executionId) => {
      const store = deps.charts;
      return store === undefined ? Promise.resolve(new Map()) : usingQueue(() => store.read(orgId, executionId));
    },

    readBatch: (orgId, batchId, page) => usingQueue(() => client.batches.read(orgId, batchId, page)),
  };
}

/**
 * Redis being unreachable is the service's state, not the caller's fault: 503, not a 500. An
 * organization over its limit: 429 with the Retry-After its backlog gives.
 */
async function usingQueue<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof QueueUnavailableError) {
      throw new AppError("service_unavailable", "Service unavailable: the job queue cannot be reached");
    }
    if (error instanceof LimitExceededError) {
      throw new AppError("too_many_requests", error.message, { "Retry-After": String(error.retryAfterSeconds) });
    }
    throw error;
  }
}
