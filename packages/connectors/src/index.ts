// The runtime entry, `@pes/connectors`: the schemas and what runs actions (the worker's).
export * from "./schemas.js";
export * from "./run-action.js";
export * from "./undici-http-client.js";
export * from "./http/runtime.js";
export * from "./prometheus/prometheus-response.js";
export * from "./prometheus/runtime.js";
export * from "./datadog/runtime.js";
export * from "./loki/runtime.js";
export * from "./elasticsearch/runtime.js";
export * from "./redaction-detectors.js";
export * from "./redactor.js";
