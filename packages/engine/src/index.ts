export * from "./engine.js";
export * from "./time-window.js";
export * from "./query-slots.js";
export { lookBeforeTrends, TREND_LOOKBACK_MS } from "./trend-lookback.js";
export type { LanguageModelOptions } from "./language-model-summary.js";
