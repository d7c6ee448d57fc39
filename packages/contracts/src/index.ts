export * from "./errors.js";
export * from "./execution-input.js";
export * from "./execution-job.js";
export * from "./execution-result.js";
export * from "./execution-status.js";
export * from "./job-reply.js";
export * from "./json-text.js";
export * from "./playbook.js";
