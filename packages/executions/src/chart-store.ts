import { CHARTS_VERSION, ExecutionCharts, type ChartData } from "@pes/contracts";
import { chartsKey, closeConnection, createProducerConnection, keySpace, type KeySpace, type RedisConnection } from "@pes/jobs";
import type { Logger } from "pino";
import { QueueUnavailableError } from "./execution-client.js";

/**
 * The data of executions' charts (the points their actions fetched, cut down, and what they were judged
 * against): one Redis string per execution under its organization's keys, written with one command when
 * the execution finishes and only when it has something to draw, gone with the execution's record. What
 * `GET /playbook/execution/{id}/charts/{action}` and the execution's page draw.
 */
export interface ChartStore {
  /** Keeps the charts of an execution, by action index, for `ttlMs`. Nothing is written for none. */
  keep(orgId: string, executionId: string, charts: ReadonlyMap<number, ChartData>, ttlMs: number): Promise<void>;
  /**
   * The organization's charts of that execution by action index: empty when none were kept, they are
   * another organization's, gone, or not readable by this build. Throws QueueUnavailableError when Redis is away.
   */
  read(orgId: string, executionId: string): Promise<Map<number, ChartData>>;
}

/** The store on a connection its caller owns (the worker's producer connection). */
export function createChartStore(connection: () => RedisConnection, keys: KeySpace): ChartStore {
  return {
    async keep(orgId, executionId, charts, ttlMs) {
      if (charts.size === 0) return;
      const stored: ExecutionCharts = { v: CHARTS_VERSION, charts: [...charts].map(([action, chart]) => ({ action, chart })) };
      await connection().set(chartsKey(keys, orgId, executionId), JSON.stringify(stored), "PX", Math.max(1, Math.round(ttlMs)));
    },
    async read(orgId, executionId) {
      let text: string | null;
      try {
        text = await connection().get(chartsKey(keys, orgId, executionId));
      } catch (error) {
        throw new QueueUnavailableError("could not read the execution's charts", { cause: error });
      }
      if (text === null) return new Map();
      const parsed = ExecutionCharts.safeParse(JSON.parse(text));
      return parsed.success ? new Map(parsed.data.charts.map(({ action, chart }) => [action, chart])) : new Map();
    },
  };
}

/** A chart store on a connection of its own (the API's): nothing connects before start(). */
export interface OpenedChartStore extends ChartStore {
  start(): void;
  close(): Promise<void>;
}

export function openChartStore(options: { redisUrl: string; prefix: string; logger: Logger }): OpenedChartStore {
  const connection = createProducerConnection(options.redisUrl, options.logger, "pes:charts");
  const store = createChartStore(() => connection, keySpace(options.prefix, options.redisUrl));
  return {
    ...store,
    start() {
      // Fails fast until Redis answers (a read is then a 503), and reconnects by itself.
      connection.connect().catch(() => {});
    },
    close: () => closeConnection(connection),
  };
}
