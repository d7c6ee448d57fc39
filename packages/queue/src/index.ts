export { CHAT_POST_QUEUE, EXECUTION_QUEUE, MESSAGE_EXECUTION_QUEUE, keySpace, type KeySpace } from "./queue-names.js";
export { openDashboardQueues, type DashboardQueues } from "./dashboard-queues.js";
export {
  BATCH_ITEM_POST_WINDOW_MS,
  EXECUTE_JOB,
  EXECUTE_MESSAGE_JOB,
  POST_BATCH_ITEM_JOB,
  jobToAdd,
  type AwaitedJobDeclaration,
  type JobDeclaration,
  type JobOptions,
} from "./job-declarations.js";
export { handleJob, type CatalogEntry, type JobCatalog, type JobContext } from "./job-catalog.js";
export { createJobWorker, type JobOutcome, type JobWorker, type JobWorkerOptions } from "./job-worker.js";
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
export type { IdempotencyClaim, IdempotencyKeys, IdempotentRequest } from "./idempotency-keys.js";
export { createQueueInspector, type QueueDepth, type QueueInspector } from "./queue-inspector.js";
export { createJobProducer, type JobProducer } from "./job-producer.js";
export { RedisRefusedError, type RedisConnection } from "./redis-connections.js";
export { createRedisQuerySlots, type RedisQuerySlotsOptions } from "./query-slots.js";
export { batchItemId, type BatchItem, type BatchItemView, type BatchPage, type Batches, type BatchView, type NewBatch } from "./batch-store.js";
export { LimitExceededError, type Lane, type LaneLimit } from "./execution-lifecycle.js";
export { createEvidenceStore, openEvidenceStore, type EvidenceStore, type OpenedEvidenceStore } from "./evidence-store.js";
