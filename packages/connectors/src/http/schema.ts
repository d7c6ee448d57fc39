import { CHANGE_TYPES } from "@pes/contracts";
import { z } from "zod";
import { connectionFields } from "../connection-options.js";
import { SecretRef } from "../secret-ref.js";

/** A JSON HTTP API; its base URL and headers (secrets by reference) come only from configuration. */
export const HttpDataSource = z.strictObject({
  type: z.literal("http"),
  url: z.url({ protocol: /^https?$/ }),
  ...connectionFields,
  headers: z.record(z.string(), z.union([z.string(), SecretRef])).optional(),
});
export type HttpDataSource = z.infer<typeof HttpDataSource>;

/**
 * Declares that the answer is a change (a deploy, a configuration change, a restart) at a time: the
 * analysis weighs it as a cause candidate, the likely cause when it came shortly before the first symptom.
 * The value at `answerField` says what it changed to (a version, a revision); `timeField` is a dotted
 * path to when it happened; `subject` (a text template) says what changed, e.g. `{{service}}`.
 */
export const HttpChange = z.strictObject({
  kind: z.enum(CHANGE_TYPES),
  timeField: z.string().min(1),
  subject: z.string().min(1),
});
export type HttpChange = z.infer<typeof HttpChange>;

/**
 * One request of a playbook action. `path` is a template appended to the data source's URL, each
 * `{{name}}` URL-encoded; `body` is a JSON template whose string leaves are filled with attribute values
 * as JSON strings. `answerField` is a dotted path into the JSON response whose value is the answer; with
 * `change`, the answer is a change at the time found at `change.timeField`.
 */
export const HttpAction = z.strictObject({
  method: z.enum(["GET", "POST"]).default("GET"),
  path: z.string().startsWith("/"),
  body: z.record(z.string(), z.unknown()).optional(),
  answerField: z.string().min(1),
  /** A link template for mostImportantLink (values URL-encoded); default: the request URL. */
  link: z.string().optional(),
  change: HttpChange.optional(),
});
export type HttpAction = z.infer<typeof HttpAction>;
