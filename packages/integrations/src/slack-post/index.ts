export { createChannelPacer, type ChannelPacer, type ChannelPacerOptions } from "./channel-pacer.js";
export {
  renderBatchRoot,
  renderEnrichment,
  SLACK_LIMITS,
  type EnrichmentBlock,
  type EnrichmentView,
  type RenderOptions,
  type SlackPostMessage,
} from "./enrichment-blocks.js";
export { MAX_CHART_FILES, postChartFiles, type ChartFile, type ChartPostOutcome } from "./post-charts.js";
export { runOncePerKey, type AttemptResult, type OnceOutcome, type OncePerKeyOptions } from "./once-per-key.js";
export {
  postBatchRoot,
  postEnrichment,
  postItemReply,
  POST_MARK_EVENT,
  type SlackPostContext,
  type SlackPostOutcome,
} from "./post-enrichment.js";
export { createSlackPostClient, type CallBounds, type SlackPostClientOptions } from "./slack-calls.js";
export { escapeSlackText, slackLink } from "./slack-mrkdwn.js";
