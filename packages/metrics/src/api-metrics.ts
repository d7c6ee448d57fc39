import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import { createProcessRegistry } from "./process-registry.js";

/**
 * What the API finds when it looks up a job whose caller's deadline came without a reply (the reply
 * path's timeouts): `completed` means the result was stored but its message never arrived.
 */
export const REPLY_TIMEOUT_JOB_STATES = ["completed", "queued", "active", "failed", "unknown", "unreadable"] as const;
export type ReplyTimeoutJobState = (typeof REPLY_TIMEOUT_JOB_STATES)[number];

/** One look at a queue: its job counts by state and how long its oldest waiting job has waited. */
export interface QueueReading {
  /** The queue's name (a constant of the code, never anything a caller sent). */
  queue: string;
  /** Jobs by BullMQ state (waiting, active, delayed, failed…). */
  counts: Readonly<Record<string, number>>;
  /** Seconds since the oldest waiting job was added; 0 when none waits. */
  oldestWaitingAgeSeconds: number;
}

export interface ApiMetricsOptions {
  /**
   * Reads the queues, on a scrape. The API reports queue depth (one process, not every worker, need
   * read Redis for it); without this the queue gauges are absent.
   */
  readQueues?: () => Promise<readonly QueueReading[]>;
  /** How long one reading serves every scrape, so that a burst of scrapes reads Redis once. */
  queueCacheMs?: number;
  /** Told when a reading fails; the queue gauges are then absent from that scrape. */
  onQueueReadError?: (error: unknown) => void;
}

/** The API's metrics: its registry and what the API records into it. */
export interface ApiMetrics {
  readonly registry: Registry;
  /**
   * One finished HTTP request. `route` is the route's pattern (`/playbook/execution`), or a fixed word
   * for requests no route took: never the URL, which holds whatever a caller typed.
   */
  observeHttpRequest(method: string, route: string, status: number, seconds: number): void;
  /** A caller answered at its deadline, no reply having come, by what became of its job. */
  countReplyTimeout(jobState: ReplyTimeoutJobState): void;
  /** A request that joined an identical execution (or its Idempotency-Key's) rather than starting one. */
  countCoalesced(): void;
  /** An answer on an execution's verdict (right or wrong cause), by the organization's id (configuration, never a caller's text). */
  countFeedback(organization: string, verdict: "right" | "wrong"): void;
}

/** Up to the longest execution deadlines (EXECUTION_TIMEOUT_MS is 120 s by default). */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
const DEFAULT_QUEUE_CACHE_MS = 5_000;

/**
 * The API's registry: process metrics, HTTP requests by route and status (a latency histogram, whose
 * `_count` is the request count), reply-path timeouts, and, read from Redis on a scrape, queue depth
 * and the oldest waiting job's age.
 */
export function createApiMetrics(options: ApiMetricsOptions = {}): ApiMetrics {
  const registry = createProcessRegistry();
  const requests = new Histogram({
    name: "pes_http_request_duration_seconds",
    help: "HTTP requests served by the API, by method, route pattern and status: time to the response's end",
    labelNames: ["method", "route", "status"],
    buckets: HTTP_BUCKETS,
    registers: [registry],
  });
  const replyTimeouts = new Counter({
    name: "pes_reply_timeouts_total",
    help: "Callers answered at their deadline because no reply came, by the state their job was found in",
    labelNames: ["job_state"],
    registers: [registry],
  });
  for (const jobState of REPLY_TIMEOUT_JOB_STATES) replyTimeouts.labels(jobState).inc(0);
  const boundReplyTimeouts = new Map(REPLY_TIMEOUT_JOB_STATES.map((state) => [state, replyTimeouts.labels(state)]));
  const coalesced = new Counter({
    name: "pes_executions_coalesced_total",
    help: "Execution requests that joined an execution already started (identical, or the same Idempotency-Key) instead of starting one",
    registers: [registry],
  });

  const feedback = new Counter({
    name: "pes_feedback_total",
    help: "Answers on executions' verdicts by the people who fixed the incidents, by organization and verdict (right or wrong cause)",
    labelNames: ["organization", "verdict"],
    registers: [registry],
  });

  const { readQueues } = options;
  if (readQueues !== undefined) {
    const read = cachedFor(options.queueCacheMs ?? DEFAULT_QUEUE_CACHE_MS, readQueues);
    const readings = async (): Promise<readonly QueueReading[] | undefined> => {
      try {
        return await read();
      } catch (error) {
        options.onQueueReadError?.(error);
        return undefined;
      }
    };
    const jobs: Gauge<"queue" | "state"> = new Gauge({
      name: "pes_queue_jobs",
      help: "Jobs in the queue by state, as the API read them from Redis on the scrape (cached a few seconds)",
      labelNames: ["queue", "state"],
      registers: [registry],
      async collect() {
        const found = await readings();
        jobs.reset();
        for (const { queue, counts } of found ?? []) {
          for (const [state, count] of Object.entries(counts)) jobs.labels(queue, state).set(count);
        }
      },
    });
    const oldest: Gauge<"queue"> = new Gauge({
      name: "pes_queue_oldest_waiting_job_age_seconds",
      help: "Seconds since the oldest job still waiting for a worker was added; 0 when none waits",
      labelNames: ["queue"],
      registers: [registry],
      async collect() {
        const found = await readings();
        oldest.reset();
        for (const { queue, oldestWaitingAgeSeconds } of found ?? []) oldest.labels(queue).set(oldestWaitingAgeSeconds);
      },
    });
  }

  // One bound child per label combination: a request then costs a map look-up, not a label object.
  const boundRequests = new Map<string, Histogram.Internal<"method" | "route" | "status">>();
  return {
    registry,
    observeHttpRequest(method, route, status, seconds) {
      const key = `${method} ${status} ${route}`;
      let child = boundRequests.get(key);
      if (child === undefined) {
        child = requests.labels(method, route, String(status));
        boundRequests.set(key, child);
      }
      child.observe(seconds);
    },
    countReplyTimeout(jobState) {
      boundReplyTimeouts.get(jobState)?.inc();
    },
    countCoalesced() {
      coalesced.inc();
    },
    countFeedback(organization, verdict) {
      feedback.labels(organization, verdict).inc();
    },
  };
}

/**
 * `read`, called at most once per `ms`: callers within that time (and during the read) share its
 * promise, failed or not, so that a storm of scrapes costs Redis one reading.
 */
function cachedFor<T>(ms: number, read: () => Promise<T>): () => Promise<T> {
  let last: { at: number; value: Promise<T> } | undefined;
  return () => {
    const now = performance.now();
    if (last === undefined || now - last.at >= ms) {
      const value = read();
      // Observed here so that a failure nobody awaits is not unhandled; the callers see it as well.
      value.catch(() => {});
      last = { at: now, value };
    }
    return last.value;
  };
}
