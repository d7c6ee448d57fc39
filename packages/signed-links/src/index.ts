export * from "./signed-links.js";
export * from "./feedback-links.js";
