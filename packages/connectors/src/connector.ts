import type { ActionOutcomes } from "./action-outcomes.js";
import type { TlsOptions } from "./connection-options.js";
import type { DataSourceSecrets } from "./data-source-secrets.js";
import type { HttpClient } from "./http-client.js";

/** The time an action looks at: `time` is the issue, `start`..`end` the window around it. */
export interface TimeWindow {
  start: Date;
  time: Date;
  end: Date;
}

/** What every data source has, whatever its connector: what the engine and the HTTP client read. */
export interface DataSourceBase {
  type: string;
  url: string;
  tls?: TlsOptions;
  proxy?: string;
}

/** One run of an action, as the engine starts it. */
export interface ActionContext {
  /** The action's title, so that the short answer can name what it measured. */
  title: string;
  attributes: Readonly<Record<string, string>>;
  window: TimeWindow;
  /** Aborted at the action's deadline. */
  signal: AbortSignal;
}

/** What the worker sets up once per data source, at start, and hands to its connector with every action. */
export interface DataSourceConnection {
  /** The data source's secrets, resolved at start: a connector never reads the environment. */
  secrets: DataSourceSecrets;
  /** The data source's own HTTP client (keep-alive pool, its TLS settings and proxy), built at start. */
  http: HttpClient;
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
  /** The connector's deep link for this query (undefined when it has none). */
  link: string | undefined;
  /** How the connector writes its outcomes: every short answer redacted and cut the same way. */
  outcomes: ActionOutcomes;
}

/** The runtime half of a connector: loaded by the worker only, never by the API. */
export interface ConnectorRuntime<DS extends DataSourceBase, Q> {
  /** Asks the data source; any failure is a `failed` outcome in plain words, never a throw. */
  fetch(request: FetchRequest<DS, Q>): Promise<ActionOutcome>;
}

/**
 * What one action found. `normal`/`abnormal` come from the data; `failed` is a query that could not be
 * answered (its message is the shortAnswer); `skipped` is an action whose attributes were not given.
 */
export interface ActionOutcome {
  status: "normal" | "abnormal" | "failed" | "skipped";
  /** One sentence a person can read, e.g. "p99 latency 1.8 s, 4.1× its level in the hour before". */
  shortAnswer: string;
  mostImportantLink?: string;
  /** How far from normal (e.g. 4.1 for 4.1×); ranks abnormal findings in the summary. */
  severity?: number;
  /**
   * Set when the value was compared with its level before the issue: level at the issue / level before
   * (4.1 = rose 4.1×, 0.25 = fell to a quarter, Infinity = rose from 0, 0 = fell to 0, negative = changed
   * sign). Says which way an abnormal value moved, and that a normal one was checked against a baseline.
   */
  ratio?: number;
  /** When the abnormal behaviour started, if the data shows it. */
  since?: Date;
}
