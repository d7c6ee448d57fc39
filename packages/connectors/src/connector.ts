import type { DataSource } from "./data-source.js";
import type { HttpAction } from "./http/http-schemas.js";
import type { PrometheusAction } from "./prometheus/prometheus-schemas.js";

/** The time an action looks at: `time` is the issue, `start`..`end` the window around it. */
export interface TimeWindow {
  start: Date;
  time: Date;
  end: Date;
}

/** What each connector type queries with: the action spec keyed by the same name as its data-source type. */
export interface ActionSpecs {
  prometheus: PrometheusAction;
  http: HttpAction;
}

export interface ActionRequest<T extends DataSource["type"]> {
  /** The action's title, so that the short answer can name what it measured. */
  title: string;
  dataSource: Extract<DataSource, { type: T }>;
  spec: ActionSpecs[T];
  attributes: Readonly<Record<string, string>>;
  window: TimeWindow;
  /** Aborted at the action's deadline. */
  signal: AbortSignal;
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

export type Connector<T extends DataSource["type"]> = (request: ActionRequest<T>) => Promise<ActionOutcome>;
