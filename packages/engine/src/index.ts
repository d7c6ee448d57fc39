export * from "./engine.js";
export * from "./summarize.js";
export * from "./time-window.js";
