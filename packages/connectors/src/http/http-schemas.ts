import { z } from "zod";
import { SecretRef } from "../secret-ref.js";

/** A JSON HTTP API; its base URL and headers (secrets by reference) come only from configuration. */
export const HttpDataSource = z.strictObject({
  type: z.literal("http"),
  url: z.url({ protocol: /^https?$/ }),
  headers: z.record(z.string(), z.union([z.string(), SecretRef])).optional(),
});
export type HttpDataSource = z.infer<typeof HttpDataSource>;

/**
 * One request of a playbook action. `path` is a template appended to the data source's URL, each
 * `{{name}}` URL-encoded; `body` is a JSON template whose string leaves are filled with attribute values
 * as JSON strings. `answerField` is a dotted path into the JSON response whose value is the short answer.
 */
export const HttpAction = z.strictObject({
  method: z.enum(["GET", "POST"]).default("GET"),
  path: z.string().startsWith("/"),
  body: z.record(z.string(), z.unknown()).optional(),
  answerField: z.string().min(1),
  /** A link template for mostImportantLink (values URL-encoded); default: the request URL. */
  link: z.string().optional(),
});
export type HttpAction = z.infer<typeof HttpAction>;
