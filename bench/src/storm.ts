import { setTimeout as sleep } from "node:timers/promises";
import { ALERT_PLAYBOOK } from "./bench-config.js";
import type { HttpCaller, TimedReply } from "./http-calls.js";
import { spreadCalls } from "./http-calls.js";
import { readCounter } from "./metric-counter.js";
import { isExecutionSuccess } from "./scenarios.js";
import { summarizeLatencies, type LatencySummary } from "./stats.js";

/** Where the storm's effects are counted: the workers' and the API's `/metrics`, the stub's `/stats`. */
export interface CountingPoints {
  workerMetricsUrls: readonly string[];
  apiMetricsUrl: string;
  stubStatsUrl: string;
}

export interface StormResult {
  requests: number;
  /** From the first request sent to the last. */
  sendWindowMs: number;
  /** 200 answers with a result. */
  answered: number;
  failures: number;
  firstFailure: string | undefined;
  /** Executions the workers ran for the storm (`pes_jobs_total{job_name="execute"}`). */
  executionsRun: number;
  /** Distinct `X-Execution-Id`s among the answers: 1 when every caller shared one execution. */
  distinctExecutionIds: number;
  /** Requests the API counted as joining (`pes_executions_coalesced_total`). */
  joins: number;
  /** Queries the stub data source answered during the storm. */
  stubQueries: number;
  /** Executions run per request: 1 / requests when the storm ran one investigation. */
  executionsPerRequest: number;
  /** The storm's callers, each timed from its own request. */
  latency: LatencySummary;
  /** A lone caller of the same playbook on the same API just before (distinct issues, one at a time). */
  lone: LatencySummary;
  /** Storm callers' p50 and p99 over the lone caller's p50. */
  p50ToLone: number;
  p99ToLone: number;
}

export interface StormOptions {
  requests: number;
  spreadMs: number;
  loneRequests: number;
}

/**
 * The storm: `requests` identical requests (same playbook, attributes and issue time, as copies of one
 * alert carry) started evenly within `spreadMs`, each waiting for its result on its own connection, on
 * an API with coalescing on. It counts the executions where they ran (the workers' counter), the ids
 * the callers were given, the API's joins and the stub's queries, and times the callers against a lone
 * caller measured just before on the same processes.
 */
export async function storm(caller: HttpCaller, counting: CountingPoints, options: StormOptions, runId: string): Promise<StormResult> {
  const lone: number[] = [];
  for (let index = -Math.min(5, options.loneRequests); index < options.loneRequests; index += 1) {
    const reply = await caller.post("/playbook/execution", JSON.stringify({ bookName: ALERT_PLAYBOOK, attributes: { service: `lone-${runId}-${index}` } }));
    if (reply.status !== 200 || !isExecutionSuccess(parseOrUndefined(reply.body))) throw new Error(`lone caller: ${reply.status} ${reply.body.slice(0, 500)}`);
    if (index >= 0) lone.push(reply.latencyMs);
  }
  const executions = () => readCounter(counting.workerMetricsUrls, "pes_jobs_total", { job_name: "execute" });
  const joins = () => readCounter([counting.apiMetricsUrl], "pes_executions_coalesced_total");
  const [executionsBefore, joinsBefore, stubBefore] = [await settled(executions), await joins(), await stubQueries(counting.stubStatsUrl)];

  const body = JSON.stringify({ bookName: ALERT_PLAYBOOK, attributes: { service: `storm-${runId}` }, time: new Date().toISOString() });
  const sentAt: number[] = [];
  const started = performance.now();
  const replies = await spreadCalls(options.requests, options.spreadMs, (index) => {
    sentAt[index] = performance.now() - started;
    return caller.post("/playbook/execution", body);
  });

  const answered: TimedReply[] = [];
  const ids = new Set<string>();
  let firstFailure: string | undefined;
  for (const outcome of replies) {
    if (outcome.status === "rejected") {
      firstFailure ??= String(outcome.reason);
      continue;
    }
    const reply = outcome.value;
    if (reply.status === 200 && isExecutionSuccess(parseOrUndefined(reply.body))) {
      answered.push(reply);
      const id = reply.headers["x-execution-id"];
      if (typeof id === "string") ids.add(id);
    } else firstFailure ??= `${reply.status} ${reply.body.slice(0, 500)}`;
  }
  const executionsRun = (await settled(executions)) - executionsBefore;
  const latency = summarizeLatencies(answered.map((reply) => reply.latencyMs));
  const loneLatency = summarizeLatencies(lone);
  return {
    requests: options.requests,
    sendWindowMs: (sentAt[sentAt.length - 1] ?? 0) - (sentAt[0] ?? 0),
    answered: answered.length,
    failures: options.requests - answered.length,
    firstFailure,
    executionsRun,
    distinctExecutionIds: ids.size,
    joins: (await joins()) - joinsBefore,
    stubQueries: (await stubQueries(counting.stubStatsUrl)) - stubBefore,
    executionsPerRequest: executionsRun / options.requests,
    latency,
    lone: loneLatency,
    p50ToLone: latency.p50 / loneLatency.p50,
    p99ToLone: latency.p99 / loneLatency.p50,
  };
}

/**
 * A counter read once it stopped moving (two reads 200 ms apart agree): a worker counts a job as it
 * completes it, which may be just after its caller was answered.
 */
export async function settled(read: () => Promise<number>): Promise<number> {
  let previous = await read();
  for (let attempt = 0; attempt < 25; attempt += 1) {
    await sleep(200);
    const current = await read();
    if (current === previous) return current;
    previous = current;
  }
  return previous;
}

async function stubQueries(statsUrl: string): Promise<number> {
  const response = await fetch(statsUrl, { signal: AbortSignal.timeout(10_000) });
  const { requests } = (await response.json()) as { requests: number };
  return requests;
}

export function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
