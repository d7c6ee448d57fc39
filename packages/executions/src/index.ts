export {
  BATCH_EXECUTE_JOB,
  BATCH_EXECUTE_MESSAGE_JOB,
  BATCH_EXECUTION_QUEUE,
  BATCH_ITEM_POST_WINDOW_MS,
  BATCH_START_QUEUE,
  CHAT_POST_QUEUE,
  EXECUTE_JOB,
  EXECUTE_MESSAGE_JOB,
  EXECUTION_JOBS,
  EXECUTION_QUEUE,
  MESSAGE_EXECUTION_QUEUE,
  POST_BATCH_ITEM_JOB,
  SERVICE_QUEUES,
  START_BATCH_JOB,
  type ExecutionJobHandlers,
} from "./execution-jobs.js";
export { createBatchStarts, type BatchStarts } from "./batch-starts.js";
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
export { batchItemIds, type BatchItem, type BatchItemView, type BatchPage, type Batches, type BatchView, type NewBatch } from "./batch-store.js";
export { defineLifecycleCommands, finishExecution, LimitExceededError, type Lane, type LaneLimit } from "./execution-lifecycle.js";
export { createEvidenceStore, openEvidenceStore, type EvidenceStore, type OpenedEvidenceStore } from "./evidence-store.js";
export { createChartStore, openChartStore, type ChartStore, type OpenedChartStore } from "./chart-store.js";
export {
  createFeedbackStore,
  FEEDBACK_HISTORY_MAX,
  openFeedbackStore,
  type Confirmation,
  type FeedbackStore,
  type OpenedFeedbackStore,
} from "./feedback-store.js";
