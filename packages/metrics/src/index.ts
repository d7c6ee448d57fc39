export {
  createApiMetrics,
  REPLY_TIMEOUT_JOB_STATES,
  type ApiMetrics,
  type ApiMetricsOptions,
  type QueueReading,
  type ReplyTimeoutJobState,
} from "./api-metrics.js";
export {
  ACTION_OUTCOMES,
  createWorkerMetrics,
  JOB_OUTCOMES,
  type ActionObservation,
  type BudgetObservation,
  type ActionOutcomeLabel,
  type JobOutcomeLabel,
  type WorkerMetrics,
} from "./worker-metrics.js";
export { scrapeAllowed, sendMetrics } from "./scrape.js";
