export {
  BATCH_ITEM_POST_WINDOW_MS,
  CHAT_POST_QUEUE,
  EXECUTE_JOB,
  EXECUTE_MESSAGE_JOB,
  EXECUTION_QUEUE,
  MESSAGE_EXECUTION_QUEUE,
  POST_BATCH_ITEM_JOB,
  SERVICE_QUEUES,
} from "./execution-jobs.js";
export {
  createExecutionClient,
  QueueUnavailableError,
  type CoalescingSettings,
  type ExecuteManyOptions,
  type ExecuteOptions,
  type ExecutionAnswer,
  type ExecutionClient,
  type ExecutionClientOptions,
  type ExecutionView,
  type SubmitOptions,
  type SubmittedExecution,
  type DeadlineJobState,
  type ExecutionOutcome,
  type ExecutionRequest,
  type MessageExecutionRequest,
} from "./execution-client.js";
export { createExecutionReplies, createExecutionWorker } from "./execution-replies.js";
export type { IdempotencyClaim, IdempotencyKeys, IdempotentRequest } from "./idempotency-keys.js";
export { batchItemId, type BatchItem, type BatchItemView, type BatchPage, type Batches, type BatchView, type NewBatch } from "./batch-store.js";
export { LimitExceededError, type Lane, type LaneLimit } from "./execution-lifecycle.js";
