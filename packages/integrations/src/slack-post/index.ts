export * from "./enrichment-blocks.js";
export * from "./slack-mrkdwn.js";
