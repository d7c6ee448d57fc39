/**
 * OpenTelemetry tracing, off unless the standard `OTEL_*` variables configure an exporter. This module
 * loads nothing of the SDK: `startTracing` imports it only when tracing is on, so a process without
 * `OTEL_*` variables pays for the API's no-op tracer and nothing else.
 */

/** Span attributes of our own (names, ids and configuration; never attribute values, URLs or secrets). */
export const SpanAttributes = {
  /** The request id the API gave the execution (its X-Request-Id), in every span of the execution. */
  requestId: "pes.request_id",
  /** The connector type of an action ("prometheus", "loki", …). */
  connectorType: "pes.connector.type",
  /** The data source an action queries, by its configured name. */
  dataSource: "pes.data_source.name",
  /** What the action's evidence was ("failed", or the kind of evidence it found). */
  actionOutcome: "pes.action.outcome",
} as const;

/** The traces exporters this service can start, by their `OTEL_TRACES_EXPORTER` names. */
type TracesExporter = "otlp" | "console";

/** Tracing as the environment configures it: off, or on with an exporter (and the OTLP protocol). */
export type TracingSettings = { enabled: false } | { enabled: true; exporter: TracesExporter; protocol: "http/protobuf" | "http/json" };

/** A bad `OTEL_*` value: the process stops with this message, naming the variable. */
export class TracingConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TracingConfigError";
  }
}

/**
 * Reads the standard OpenTelemetry variables. On when `OTEL_TRACES_EXPORTER` names an exporter, or an
 * OTLP endpoint is set (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`); off with
 * neither (unlike the SDK's own default of `otlp`, so that nothing is sent anywhere unasked), with
 * `OTEL_TRACES_EXPORTER=none` or with `OTEL_SDK_DISABLED=true`.
 * @throws TracingConfigError for an exporter or protocol this service does not ship.
 */
export function tracingSettings(env: NodeJS.ProcessEnv = process.env): TracingSettings {
  const value = (name: string) => env[name]?.trim().toLowerCase() || undefined;
  if (value("OTEL_SDK_DISABLED") === "true") return { enabled: false };
  const named = value("OTEL_TRACES_EXPORTER");
  const endpoint = value("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") ?? value("OTEL_EXPORTER_OTLP_ENDPOINT");
  if (named === "none" || (named === undefined && endpoint === undefined)) return { enabled: false };
  const exporter = named ?? "otlp";
  if (exporter !== "otlp" && exporter !== "console") {
    throw new TracingConfigError(`OTEL_TRACES_EXPORTER=${exporter} is not supported: use otlp, console or none`);
  }
  // The specification's default protocol is http/protobuf.
  const protocol = value("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") ?? value("OTEL_EXPORTER_OTLP_PROTOCOL") ?? "http/protobuf";
  if (protocol !== "http/protobuf" && protocol !== "http/json") {
    throw new TracingConfigError(`OTEL_EXPORTER_OTLP_PROTOCOL=${protocol} is not supported: use http/protobuf or http/json`);
  }
  return { enabled: true, exporter, protocol };
}

/** Tracing once started: `shutdown` exports the spans still buffered. */
export interface Tracing {
  readonly enabled: boolean;
  shutdown(): Promise<void>;
}

/**
 * Starts tracing for this process when the environment configures it (see tracingSettings): registers
 * the tracer provider, the W3C trace-context propagator and the HTTP server/client (`node:http`) and
 * undici instrumentations. Call it before the process serves or sends anything. When off, it loads
 * nothing and `trace.getTracer` stays the API's no-op.
 * @throws TracingConfigError naming the variable whose value is unusable.
 */
export async function startTracing(serviceName: string, env: NodeJS.ProcessEnv = process.env): Promise<Tracing> {
  const settings = tracingSettings(env);
  if (!settings.enabled) return { enabled: false, shutdown: async () => {} };
  const { startSdk } = await import("./sdk.js");
  return startSdk(serviceName, settings);
}
