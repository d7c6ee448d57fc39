export * from "./connector.js";
export * from "./data-source.js";
export * from "./secret-ref.js";
export * from "./http/http-schemas.js";
export * from "./prometheus/prometheus-schemas.js";
