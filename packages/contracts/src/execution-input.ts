import { z } from "zod";

/** Attribute values are strings: they scope the issue and fill playbook templates. */
export const Attributes = z
  .record(z.string().min(1).max(128), z.string().max(1024))
  .meta({ description: "Key-value pairs that scope the issue and parameterize the playbook." });
export type Attributes = z.infer<typeof Attributes>;

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
  time: z
    .iso.datetime({ offset: true, error: "time must be an ISO 8601 date-time with a Z or an offset" })
    .meta({ description: "When the issue occurred; defaults to now when bookName is given." }),
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

/**
 * The body of `POST /playbook/execution`: the spec's three variants (BookNameInput, MessageLinkInput,
 * AlertDetailsInput) plus the common fields, as one strict object so that each broken rule gets its own
 * issue with a precise path instead of an opaque "no variant matched".
 */
export const PlaybookExecutionInput = z
  .strictObject({
    bookName: fields.bookName.optional(),
    messageLink: fields.messageLink.optional(),
    title: fields.title.optional(),
    time: fields.time.optional(),
    attributes: fields.attributes,
    details: fields.details.optional(),
    liveRun: fields.liveRun.optional(),
    channelId: fields.channelId.optional(),
  })
  .superRefine((input, ctx) => {
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
  })
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
