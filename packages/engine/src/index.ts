export * from "./engine.js";
export * from "./time-window.js";
export * from "./query-slots.js";
export type { LanguageModelOptions } from "./language-model-summary.js";
