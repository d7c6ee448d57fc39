export * from "./template.js";
export * from "./url-template.js";
