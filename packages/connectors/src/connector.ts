import type { FailedObservation, Observation, TimeWindow } from "@pes/contracts";
import type { TlsOptions } from "./connection-options.js";
import type { DataSourceSecrets } from "./data-source-secrets.js";
import type { HttpClient } from "./http-client.js";
import type { SharedFetches } from "./shared-fetches.js";

export type { TimeWindow } from "@pes/contracts";

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
  /** The action's title, for logs: the analysis cites it in the evidence. */
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

/**
 * What a connector's fetch gets: the query with its template fields filled, the window, and the data
 * source's connection. Not the action's title or the attributes: what it asks is its query and
 * window alone, so identical queries share one fetch.
 */
export interface FetchRequest<DS extends DataSourceBase, Q> extends Omit<ActionContext, "title" | "attributes">, DataSourceConnection {
  dataSource: DS;
  /** The query, every template filled with its encoding: exactly what is sent. */
  query: Q;
}

/**
 * The runtime half of a connector: loaded by the worker only, never by the API. `O` narrows what its
 * fetch gives (a connector that always answers with one kind of observation says which: its tests read it).
 */
export interface ConnectorRuntime<DS extends DataSourceBase, Q, O extends Observation = Observation> {
  /**
   * Asks the data source and returns what it answered, as parsed from its wire format (an observation:
   * data, never evidence or sentences; the analysis reads it). Any failure is a `failed` observation in
   * plain words, never a throw. The engine redacts the data source's secrets from every text read from
   * it, so a runtime need not.
   */
  fetch(request: FetchRequest<DS, Q>): Promise<O | FailedObservation>;
}
