// The schema entry, `@pes/connectors/schemas`: what configuration needs to validate data sources and
// playbooks (schemas, template encodings, links, the registry). Nothing here loads a connector's runtime
// or the HTTP client: the API imports this, and only the worker imports `@pes/connectors`.
export * from "./connector.js";
export * from "./connector-definition.js";
export * from "./connector-registry.js";
export * from "./stock-connectors.js";
export * from "./data-source.js";
export * from "./secret-ref.js";
export * from "./connection-options.js";
export * from "./http-client.js";
export * from "./data-source-secrets.js";
export * from "./template-encodings.js";
export * from "./query-templates.js";
export * from "./http/schema.js";
export * from "./prometheus/schema.js";
export * from "./prometheus/prometheus-link.js";
export * from "./prometheus/promql-escape.js";
export * from "./datadog/schema.js";
export * from "./datadog/datadog-link.js";
export * from "./loki/schema.js";
export * from "./elasticsearch/schema.js";
export { hasLoneSurrogate } from "./regex-escape.js";
export { BUILT_IN_REDACTION_KINDS, type BuiltInRedactionKind } from "./redaction-detectors.js";
export { customPatternProblem, MAX_PATTERN_LENGTH } from "./redaction-pattern-check.js";
export type { CustomRedactionPattern, RedactionPolicy } from "./redactor.js";
