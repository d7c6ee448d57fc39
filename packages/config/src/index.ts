export * from "./catalog.js";
export * from "./check-secrets.js";
export * from "./config-error.js";
export * from "./load-config.js";
export * from "./organization-file.js";
export * from "./environment.js";
export * from "./integration-settings.js";
export * from "./team-access.js";
