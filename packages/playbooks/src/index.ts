export * from "./monitor-name-matcher.js";
export * from "./playbook-definition.js";
