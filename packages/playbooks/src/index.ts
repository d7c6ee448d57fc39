export * from "./gadget-args.js";
export * from "./message-link.js";
export * from "./mitigations.js";
export * from "./monitor-name-matcher.js";
export * from "./playbook-definition.js";
export * from "./playbook-duration.js";
export * from "./playbook-templates.js";
export * from "./resolve-execution.js";
