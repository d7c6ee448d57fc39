export {
  batchCountedKey,
  batchInvalidKey,
  batchItemsKey,
  auditRecordedKey,
  auditStreamKey,
  batchKey,
  batchLostCheckKey,
  batchRootKey,
  batchRootLockKey,
  channelPaceKey,
  chartsKey,
  coalesceKey,
  evidenceKey,
  executionBatchesKey,
  executionKey,
  executionWaitersKey,
  feedbackIndexKey,
  feedbackKey,
  finishedKey,
  idempotencyKey,
  incidentNoteKey,
  keySpace,
  laneKey,
  memoryContentKey,
  memoryGroupKey,
  memoryPartKey,
  memoryPrefix,
  memoryRecordKey,
  memoryScopesKey,
  organizationKeysLua,
  organizationPrefix,
  queryMinuteKey,
  querySlotsKey,
  replyChannel,
  slackPostKey,
  slackSignatureKey,
  teamsPostKey,
  type KeySpace,
} from "./redis-keys.js";
export { openDashboardQueues, type DashboardQueues } from "./dashboard-queues.js";
export { jobToAdd, type AwaitedJobDeclaration, type AwaitedPayload, type JobDeclaration, type JobOptions } from "./job-declarations.js";
export { handleCatalog, handleJob, type CatalogHandlers, type JobCatalog, type JobHandler, type JobHandlers, type JobContext } from "./job-handlers.js";
export { createJobWorker, type JobOutcome, type JobReplies, type JobWorker, type JobWorkerOptions } from "./job-worker.js";
export { createQueueInspector, type QueueDepth, type QueueInspector } from "./queue-inspector.js";
export { createJobProducer, type JobProducer } from "./job-producer.js";
export { startEnqueueSpan } from "./job-trace-context.js";
export {
  CONNECT_TIMEOUT_MS,
  closeConnection,
  createProducerConnection,
  createSubscriberConnection,
  createWorkerConnection,
  describeRedisUrl,
  RedisRefusedError,
  untilConnected,
  settlesWithin,
  withTimeout,
  type RedisConnection,
} from "./redis-connections.js";
export { createRedisQuerySlots, type RedisQuerySlotsOptions } from "./redis-query-slots.js";
