export * from "./evidence.js";
