export * from "./engine.js";
export * from "./time-window.js";
