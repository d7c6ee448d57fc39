export * from "./dev-key.js";
export * from "./dev-token.js";
