export * from "./slack/fetch-message.js";
export * from "./slack/slack-message.js";
export * from "./slack/slack-text.js";
