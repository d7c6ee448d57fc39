import { z } from "zod";
import { issueTime } from "./issue-time.js";

/** Attribute values are strings: they scope the issue and fill playbook templates. */
const attributeRecord = z.record(z.string().min(1).max(128), z.string().max(1024));

/** Most attributes a caller may send: real issues carry a handful. */
export const MAX_ATTRIBUTES = 64;
/** Most bytes (UTF-8) a caller's attribute keys and values may take together. */
export const MAX_ATTRIBUTES_BYTES = 16_384;

/**
 * The caller's attributes: at most MAX_ATTRIBUTES entries and MAX_ATTRIBUTES_BYTES of keys and values.
 * The caps are checked before the entries, so that an oversized map is refused without validating its
 * entries one by one (for tens of thousands of them, that is the most expensive part of a request).
 */
export const Attributes = z
  .preprocess((value, ctx) => {
    const issue = capIssue(value);
    if (issue !== undefined) ctx.addIssue({ code: "custom", message: issue, input: value });
    return value;
  }, attributeRecord)
  .meta({
    description: `Key-value pairs that scope the issue and parameterize the playbook: at most ${MAX_ATTRIBUTES}, and ${MAX_ATTRIBUTES_BYTES} bytes of keys and values together.`,
    maxProperties: MAX_ATTRIBUTES,
  });
export type Attributes = z.infer<typeof Attributes>;

/**
 * The attributes an execution runs with: the caller's plus those captured from the title, so not held to
 * the caller's caps (the title's length bounds the captures).
 */
export const ResolvedAttributes = attributeRecord;
export type ResolvedAttributes = z.infer<typeof ResolvedAttributes>;

function capIssue(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const keys = Object.keys(value);
  if (keys.length > MAX_ATTRIBUTES) return `attributes must hold at most ${MAX_ATTRIBUTES} entries (got ${keys.length})`;
  let bytes = 0;
  for (const key of keys) {
    const entry: unknown = Reflect.get(value, key);
    // A value that is not a string gets its own issue from the record.
    bytes += Buffer.byteLength(key) + (typeof entry === "string" ? Buffer.byteLength(entry) : 0);
  }
  if (bytes > MAX_ATTRIBUTES_BYTES) {
    return `attributes must total at most ${MAX_ATTRIBUTES_BYTES} bytes of keys and values (got ${bytes})`;
  }
  return undefined;
}

const fields = {
  bookName: z.string().trim().min(1, "bookName must not be empty").max(256).meta({ description: "Name of the playbook to run." }),
  messageLink: z
    .url({ protocol: /^https$/, error: "messageLink must be an absolute https URL" })
    .max(2048)
    .meta({ description: "Link to the chat message that describes the issue; the issue time comes from it." }),
  title: z
    .string()
    .trim()
    .min(1, "title must not be empty")
    .max(1024)
    .meta({ description: "Title of the alert or issue; identifies the playbook by its monitor names when bookName is absent." }),
  time: issueTime("time").meta({ description: "When the issue occurred; defaults to now when bookName is given." }),
  attributes: Attributes.optional(),
  details: z.string().max(16_384).meta({ description: "Additional details about the issue." }),
  liveRun: z.boolean().meta({ description: "When true, results are also sent to the incident management tool." }),
  channelId: z
    .string()
    .trim()
    .min(1, "channelId must not be empty")
    .max(256)
    .meta({ description: "Chat channel where the results are posted; enrichmentLink then links to the thread." }),
};

/** The fields of an execution body, for the bodies built on it (`POST /playbook/match`'s). */
export const executionInputShape = {
  bookName: fields.bookName.optional(),
  messageLink: fields.messageLink.optional(),
  title: fields.title.optional(),
  time: fields.time.optional(),
  attributes: fields.attributes,
  details: fields.details.optional(),
  liveRun: fields.liveRun.optional(),
  channelId: fields.channelId.optional(),
};

type ExecutionInputFields = z.output<z.ZodObject<typeof executionInputShape>>;

/** The rules across fields of an execution body: what identifies the playbook, what the time is. */
export function checkExecutionRules(input: ExecutionInputFields, ctx: z.RefinementCtx): void {
  if (input.bookName === undefined && input.messageLink === undefined && input.title === undefined) {
    ctx.addIssue({
      code: "custom",
      path: ["bookName"],
      message: "One of bookName, messageLink or title is required to identify the playbook",
    });
    return;
  }
  if (input.messageLink !== undefined) {
    // MessageLinkInput carries only the link (and optionally bookName): the message supplies the rest.
    for (const key of ["title", "time", "attributes", "details"] as const) {
      if (input[key] !== undefined) {
        ctx.addIssue({
          code: "custom",
          path: [key],
          message: `${key} cannot be combined with messageLink: the message supplies the issue details and time`,
        });
      }
    }
    return;
  }
  if (input.bookName === undefined && input.time === undefined) {
    ctx.addIssue({
      code: "custom",
      path: ["time"],
      message: "time is required when neither bookName nor messageLink is given",
    });
  }
}

/**
 * The body of `POST /playbook/execution`: the spec's three variants (BookNameInput, MessageLinkInput,
 * AlertDetailsInput) plus the common fields, as one strict object so that each broken rule gets its own
 * issue with a precise path instead of an opaque "no variant matched".
 */
export const PlaybookExecutionInput = z
  .strictObject(executionInputShape)
  .superRefine(checkExecutionRules)
  .meta({
    id: "PlaybookExecutionInput",
    description:
      "One of three variants: BookNameInput {bookName, time?}, MessageLinkInput {messageLink, bookName?} or " +
      "AlertDetailsInput {title and/or bookName, time?, attributes?, details?}; all accept liveRun and channelId. " +
      "Without bookName or messageLink, time is required.",
  });
export type PlaybookExecutionInput = z.infer<typeof PlaybookExecutionInput>;

/** Default and ceiling of `inputList` length; the API reads its own limit from BATCH_MAX_ITEMS. */
export const DEFAULT_BATCH_MAX_ITEMS = 100;

/**
 * The envelope of `POST /playbook/execution/batch`. Items are validated one by one against
 * PlaybookExecutionInput so that a bad item becomes that item's `{error}` and the others still run.
 */
export const BatchExecutionInput = z
  .strictObject({
    inputList: z
      .array(z.unknown())
      .min(1, "inputList must hold at least one input")
      .meta({ description: "The issues to investigate, each a PlaybookExecutionInput." }),
    liveRun: fields.liveRun.optional(),
    channelId: fields.channelId.optional(),
  })
  .meta({
    id: "BatchExecutionInput",
    description: "liveRun and channelId apply to every item that does not set its own.",
  });
export type BatchExecutionInput = z.infer<typeof BatchExecutionInput>;
