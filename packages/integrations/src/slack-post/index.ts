export {
  renderBatchRoot,
  renderEnrichment,
  SLACK_LIMITS,
  type EnrichmentBlock,
  type RenderOptions,
  type SlackPostMessage,
} from "./enrichment-blocks.js";
export { MAX_CHART_FILES, postChartFiles, type ChartFile, type ChartPostOutcome } from "./post-charts.js";
export {
  postBatchRoot,
  postEnrichment,
  postItemReply,
  POST_MARK_EVENT,
  type SlackPostContext,
  type SlackPostOutcome,
} from "./post-enrichment.js";
export { createSlackPostClient, type SlackPostClientOptions } from "./slack-calls.js";
export { escapeSlackText, slackLink } from "./slack-mrkdwn.js";
export {
  FEEDBACK_ACTIONS,
  FEEDBACK_ACTIONS_BLOCK_ID,
  FEEDBACK_MODAL_CALLBACK_ID,
  FEEDBACK_MODAL_INPUTS,
  FEEDBACK_STATUS_BLOCK_ID,
  feedbackActionsBlock,
  feedbackFromModal,
  feedbackModal,
  feedbackStatusBlock,
  modalBlockOf,
  withFeedbackStatus,
  type FeedbackBlock,
  type FeedbackModalTarget,
} from "./feedback-blocks.js";
