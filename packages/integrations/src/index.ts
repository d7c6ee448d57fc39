export type { AlertParser, AlertSource, ParsedAlertMessage } from "./slack/alert-parsers/alert-parser.js";
export * from "./slack/fetch-message.js";
export * from "./slack/incident-refs.js";
export * from "./slack/issue-from-message.js";
export * from "./slack/parse-alert-message.js";
export * from "./slack/slack-message.js";
export * from "./slack/slack-text.js";
export * from "./slack-post/index.js";
export * from "./incident-tools/index.js";
