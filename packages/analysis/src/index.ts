export * from "./evidence.js";
export * from "./metric-analysis.js";
export * from "./human-format.js";
export * from "./outcome-text.js";
export { actionResultOf, shortAnswer, type ActionResultText } from "./evidence-text.js";
export * from "./ranking.js";
export * from "./summarize.js";
export * from "./log-analysis.js";
export { judgeExecution, type Judgement } from "./verdict.js";
