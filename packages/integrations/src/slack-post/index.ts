export * from "./channel-pacer.js";
export * from "./enrichment-blocks.js";
export * from "./once-per-key.js";
export * from "./post-enrichment.js";
export * from "./slack-calls.js";
export * from "./slack-mrkdwn.js";
