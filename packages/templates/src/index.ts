export * from "./template.js";
