import type { Evidence, TimeWindow } from "@pes/analysis";
import type { TlsOptions } from "./connection-options.js";
import type { DataSourceSecrets } from "./data-source-secrets.js";
import type { HttpClient } from "./http-client.js";
import type { SharedFetches } from "./shared-fetches.js";

export type { TimeWindow } from "@pes/analysis";

/** What every data source has, whatever its connector: what the engine and the HTTP client read. */
export interface DataSourceBase {
  type: string;
  url: string;
  tls?: TlsOptions;
  proxy?: string;
  /** Queries of this data source running at once across all workers (connection-options.ts). */
  maxConcurrentQueries?: number;
}

/** One run of an action, as the engine starts it. */
export interface ActionContext {
  /** The action's title: the evidence cites it. */
  title: string;
  attributes: Readonly<Record<string, string>>;
  window: TimeWindow;
  /** Aborted at the action's deadline. */
  signal: AbortSignal;
  /** The action's deadline (epoch ms), when known: the HTTP client spends no retry past it. */
  deadline?: number;
}

/** What the worker sets up once per data source, at start, and hands to its connector with every action. */
export interface DataSourceConnection {
  /** The data source's secrets, resolved at start: a connector never reads the environment. */
  secrets: DataSourceSecrets;
  /** The data source's own HTTP client (keep-alive pool, its TLS settings and proxy), built at start. */
  http: HttpClient;
  /** The data source's fetches in flight, shared by identical queries over the same window (the worker's); absent: none shared. */
  shared?: SharedFetches;
}

/** An action for one connector: its data source and its query (templates not filled yet). */
export interface ActionRequest<DS extends DataSourceBase, Q> extends ActionContext, DataSourceConnection {
  dataSource: DS;
  spec: Q;
}

/** What a connector's fetch gets: the query with its template fields filled, and the action's link. */
export interface FetchRequest<DS extends DataSourceBase, Q> extends ActionContext, DataSourceConnection {
  dataSource: DS;
  /** The query, every template field filled with its encoding: exactly what is sent. */
  query: Q;
  /** The connector's deep link for this query (undefined when it has none): the evidence carries it. */
  link: string | undefined;
}

/** What a runtime's fetch gives: one evidence, or several (strongest first). */
export type Found = Evidence | readonly Evidence[];

/**
 * The runtime half of a connector: loaded by the worker only, never by the API. `F` narrows what its
 * fetch gives (a connector that always answers with one evidence says `Evidence`, which its tests read).
 */
export interface ConnectorRuntime<DS extends DataSourceBase, Q, F extends Found = Found> {
  /**
   * Asks the data source and returns what it found as evidence citing `title` (data, never sentences:
   * the analysis words it). An action that finds several things (alerts, events, rollouts, log
   * patterns) returns them all, strongest first; one that looked and found nothing returns a `none`
   * evidence saying what it looked for (an empty list reads as "nothing found"). Any failure is a
   * `failed` evidence in plain words, never a throw. The runner redacts the data source's secrets from
   * every text of it, so a runtime need not.
   */
  fetch(request: FetchRequest<DS, Q>): Promise<F>;
}
