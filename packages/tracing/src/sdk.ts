import { createRequire } from "node:module";
import { OTLPTraceExporter as OtlpJsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as OtlpProtobufExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { registerInstrumentations } from "@opentelemetry/instrumentation";
import { HttpInstrumentation } from "@opentelemetry/instrumentation-http";
import { UndiciInstrumentation } from "@opentelemetry/instrumentation-undici";
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, ConsoleSpanExporter, NodeTracerProvider, type SpanExporter } from "@opentelemetry/sdk-trace-node";
import type { Tracing, TracingSettings } from "./index.js";

/** Probes and scrapes: a span each would drown the executions. */
const UNTRACED_PATHS = /^\/(healthz|readyz|metrics)(\?|$)/;

/**
 * The SDK, loaded by startTracing only when tracing is on. The exporter and the batch processor read
 * the rest of the standard variables themselves (endpoint, headers, timeout, `OTEL_BSP_*`), the provider
 * `OTEL_TRACES_SAMPLER*`, the resource `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES`.
 */
export function startSdk(serviceName: string, settings: Extract<TracingSettings, { enabled: true }>): Tracing {
  const exporter: SpanExporter =
    settings.exporter === "console" ? new ConsoleSpanExporter() : settings.protocol === "http/json" ? new OtlpJsonExporter() : new OtlpProtobufExporter();
  const provider = new NodeTracerProvider({
    // Later ones win: the environment's service name over ours, ours over the SDK's "unknown_service".
    resource: defaultResource()
      .merge(resourceFromAttributes({ "service.name": serviceName }))
      .merge(detectResources({ detectors: [envDetector] })),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  // AsyncLocalStorage context and the W3C trace-context propagator (the `traceparent` in jobs and headers).
  provider.register();
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (request) => request.method === "GET" && UNTRACED_PATHS.test(request.url ?? ""),
      }),
      // The connectors' requests. Their URLs carry queries built from attribute values (PromQL in the query
      // string, a pod name in a Kubernetes path): only the data source's origin, from configuration, is kept.
      new UndiciInstrumentation({
        startSpanHook: (request) => ({ "url.full": request.origin, "url.path": "REDACTED", "url.query": "REDACTED" }),
      }),
    ],
  });
  // The HTTP instrumentation patches `http`/`https` when they are next required (require-in-the-middle).
  // The services are ESM and import `node:http` without `require`, before this runs: requiring them once
  // here patches the one shared module object (its `request`/`get` and Server.prototype.emit), which the
  // ESM imports and CommonJS dependencies (express, axios) use, so no loader hook (`--import`) is needed.
  // undici needs nothing of the kind: its instrumentation listens on diagnostics_channel.
  const require = createRequire(import.meta.url);
  require("node:http");
  require("node:https");
  return { enabled: true, shutdown: () => provider.shutdown() };
}
