import { randomUUID } from "node:crypto";
import { visibleTo, type OrganizationLimits } from "@pes/config";
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
import { batchTeams } from "./auth/team-requests.js";
import { AppError } from "./errors.js";

type Request = ExecutionRequest | MessageExecutionRequest;

/**
 * Who reads an execution, a batch, an evidence bundle or a chart: a caller, who sees only what its
 * teams may (visibleTo), or the organization as a whole (wholeOrganization): a signed link, which is a
 * capability, or a read whose caller was checked already.
 */
export type Reader = Pick<Caller, "orgId" | "teams" | "orgAdmin"> | { orgId: string; wholeOrganization: true };

/** The organization as a whole reads (a signed link's holder, or a read checked before). */
export function wholeOrganization(orgId: string): Reader {
  return { orgId, wholeOrganization: true };
}

/** Whether the reader may see an object that ran for `ownerTeams`: the one rule, visibleTo, for callers. */
function sees(reader: Reader, ownerTeams: readonly string[] | undefined): boolean {
  return "wholeOrganization" in reader || visibleTo(reader, ownerTeams);
}

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
  /** An execution of the reader's organization its teams may see, or undefined (none, or another team's). */
  read(reader: Reader, executionId: string): Promise<ExecutionView | undefined>;
  /** A batch the reader may see with a page of its items, or undefined. Its progress costs one read, whatever its size. */
  readBatch(reader: Reader, batchId: string, page: BatchPage): Promise<BatchView | undefined>;
  /** The evidence bundle kept for an execution the reader may see, or undefined (none kept, another team's, or no store). */
  readEvidence(reader: Reader, executionId: string): Promise<EvidenceBundle | undefined>;
  /** The data of the charts of an execution the reader may see, by action index (empty: none drawn, gone, another team's, or no store). */
  readCharts(reader: Reader, executionId: string): Promise<Map<number, ChartData>>;
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
        const teams = batchTeams(
          caller,
          items.flatMap((item) => ("request" in item ? [item.request] : [])),
        );
        if (teams === undefined) {
          const message = "inputList mixes playbooks that run for different teams: send one batch per team";
          throw new AppError("validation", [{ path: ["body", "inputList"], message }]);
        }
        await client.batches.start({ batchId, orgId: caller.orgId, items, coalesce: options.coalesce, limit: { max: itemsQueued }, teams });
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

    read: (reader, executionId) =>
      usingQueue(async () => {
        const view = await client.read(reader.orgId, executionId);
        return view !== undefined && sees(reader, view.teams) ? view : undefined;
      }),

    readEvidence: (reader, executionId) => {
      const store = deps.evidence;
      if (store === undefined) return Promise.resolve(undefined);
      return usingQueue(async () => {
        const bundle = await store.read(reader.orgId, executionId);
        return bundle !== undefined && sees(reader, bundle.teams) ? bundle : undefined;
      });
    },

    readCharts: (reader, executionId) => {
      const store = deps.charts;
      if (store === undefined) return Promise.resolve(new Map());
      return usingQueue(async () => {
        // Charts live as long as their execution's record, which says who may see them.
        if (!("wholeOrganization" in reader)) {
          const view = await client.read(reader.orgId, executionId);
          if (view === undefined || !sees(reader, view.teams)) return new Map();
        }
        return store.read(reader.orgId, executionId);
      });
    },

    readBatch: (reader, batchId, page) =>
      usingQueue(async () => {
        // Its progress first (one read): another team's batch costs no page of items.
        const head = await client.batches.read(reader.orgId, batchId, { offset: 0, limit: 0 });
        if (head === undefined || !sees(reader, head.teams)) return undefined;
        return page.limit === 0 ? head : client.batches.read(reader.orgId, batchId, page);
      }),
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
