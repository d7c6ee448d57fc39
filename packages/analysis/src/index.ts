export * from "./evidence.js";
export * from "./metric-analysis.js";
