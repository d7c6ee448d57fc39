export { EXECUTION_QUEUE } from "./queue-names.js";
export {
  createExecutionClient,
  QueueUnavailableError,
  type ExecutionClient,
  type ExecutionClientOptions,
  type ExecutionRequest,
} from "./execution-client.js";
export { createExecutionWorker, type ExecutionWorker, type ExecutionWorkerOptions } from "./execution-worker.js";
export { RedisRefusedError } from "./redis-connections.js";
