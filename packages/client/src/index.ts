export * from "./batch-chunks.js";
export * from "./client-errors.js";
export * from "./pes-client.js";
export { DEFAULT_RETRY, type RetryOptions } from "./retry-policy.js";
