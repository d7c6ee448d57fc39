export * from "./batch-chunks.js";
export { batchIdempotencyKey } from "./batch-idempotency-key.js";
export type { BatchItemResult, BatchReconnect, BatchResultsOptions } from "./batch-results.js";
export * from "./client-errors.js";
export * from "./pes-client.js";
export { DEFAULT_RETRY, type RetryOptions } from "./retry-policy.js";
export { runCli, ExitCode, type CliIo } from "./cli-program.js";
