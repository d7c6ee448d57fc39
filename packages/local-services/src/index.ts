export * from "./demo-incident.js";
export * from "./fake-elasticsearch.js";
export * from "./fake-loki.js";
export * from "./free-port.js";
export * from "./large-range-answer.js";
export * from "./prometheus.js";
export * from "./redis.js";
export * from "./test-http-server.js";
