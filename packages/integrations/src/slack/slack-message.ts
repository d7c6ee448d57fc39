import { z } from "zod";

/**
 * A string field of a message read leniently: a value of another type (Slack's payloads vary between
 * senders) is dropped rather than failing the whole message.
 */
const text = z.string().optional().catch(undefined);

/** A legacy attachment field (`attachments[].fields[]`): a title over a value. */
export const SlackAttachmentField = z.object({ title: text, value: text });
export type SlackAttachmentField = z.infer<typeof SlackAttachmentField>;

/**
 * A legacy secondary attachment as bots still post it (docs.slack.dev "Legacy: secondary message
 * attachments"): Alertmanager and Grafana post exactly one of these.
 */
export const SlackAttachment = z.object({
  title: text,
  title_link: text,
  text: text,
  fallback: text,
  pretext: text,
  footer: text,
  author_name: text,
  /** Unix seconds; Grafana sets the time it sent the notification. */
  ts: z.union([z.string(), z.number()]).optional().catch(undefined),
  fields: z.array(SlackAttachmentField).optional().catch(undefined),
  /** Block Kit inside an attachment; read like the message's own blocks. */
  blocks: z.array(z.unknown()).optional().catch(undefined),
  /** Legacy buttons: a button's `url` may be the incident's. */
  actions: z
    .array(z.object({ text: text, url: text }))
    .optional()
    .catch(undefined),
});
export type SlackAttachment = z.infer<typeof SlackAttachment>;

/**
 * A message as `conversations.history` and `conversations.replies` return it: only the parts the
 * alert parsers read. Blocks stay `unknown`: their shapes are many and nested, and they are walked with
 * checks (message-content.ts).
 */
export const SlackMessage = z.object({
  ts: z.string(),
  thread_ts: text,
  text: text,
  subtype: text,
  /** The sender's display name for bot messages posted with `username` (Alertmanager: "AlertManager"). */
  username: text,
  bot_id: text,
  bot_profile: z.object({ name: text }).optional().catch(undefined),
  attachments: z.array(SlackAttachment).optional().catch(undefined),
  blocks: z.array(z.unknown()).optional().catch(undefined),
});
export type SlackMessage = z.infer<typeof SlackMessage>;

const SLACK_TS = /^(\d{1,12})\.(\d{6})$/;

/**
 * The time a Slack timestamp (`1700000000.123456`, seconds and microseconds) names, to the millisecond.
 * @returns undefined when `ts` is not a Slack timestamp.
 */
export function slackTsToDate(ts: string): Date | undefined {
  const match = SLACK_TS.exec(ts);
  if (match === null) return undefined;
  const [, seconds = "", micros = ""] = match;
  return new Date(Number(seconds) * 1000 + Math.floor(Number(micros) / 1000));
}
