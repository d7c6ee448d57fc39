export * from "./enrichment-blocks.js";
export * from "./once-per-key.js";
export * from "./slack-mrkdwn.js";
