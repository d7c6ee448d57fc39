import type { SlackAttachment, SlackMessage } from "./slack-message.js";
import { bareUrls, slackToPlainText, type SlackLink } from "./slack-text.js";

/** A labelled value: an attachment field, or a Block Kit section field read as `label: value`. */
export interface LabelledValue {
  label: string;
  value: string;
}

/** One attachment's parts, as plain text. */
export interface AttachmentContent {
  title: string;
  titleLink: string | undefined;
  text: string;
  fallback: string;
  pretext: string;
  footer: string;
  fields: LabelledValue[];
  /** The attachment's `ts` (Unix seconds), when it has one. */
  time: Date | undefined;
  /** Its Block Kit blocks' text, one entry per block. */
  blocks: string[];
}

/** A message's parts as plain text, for the alert parsers: each reads the parts its tool fills. */
export interface MessageContent {
  /** Who posted it: the `username` a bot set, else its app's name. */
  sender: string;
  text: string;
  attachments: AttachmentContent[];
  /** The message's Block Kit text, one entry per block, in order (rich text excluded: it repeats `text`). */
  blocks: string[];
  /** The text of its `header` blocks (in messages and attachments), which name what the message is about. */
  headers: string[];
  /** Labelled values from attachment fields and section fields. */
  fields: LabelledValue[];
  /** Every link: in text, titles, fields, blocks and buttons, in that order, each URL once. */
  links: SlackLink[];
}

/** Reads a message's text, attachments and blocks as plain text (slackToPlainText), collecting links. */
export function readMessageContent(message: SlackMessage): MessageContent {
  const links: SlackLink[] = [];
  const plain = (mrkdwn: string | undefined): string => {
    if (mrkdwn === undefined || mrkdwn === "") return "";
    const read = slackToPlainText(mrkdwn);
    links.push(...read.links);
    return read.text;
  };
  const headers: string[] = [];
  const fields: LabelledValue[] = [];
  const blocksOf = (blocks: readonly unknown[] | undefined): string[] => {
    const texts: string[] = [];
    for (const block of blocks ?? []) {
      const read = readBlock(block, plain, links);
      if (read.header !== undefined) headers.push(read.header);
      fields.push(...read.fields);
      if (read.text !== "") texts.push(read.text);
    }
    return texts;
  };

  const text = plain(message.text);
  const messageBlocks = blocksOf(message.blocks);
  const attachments = (message.attachments ?? []).map((attachment) => readAttachment(attachment, plain, blocksOf, links));
  for (const attachment of attachments) fields.push(...attachment.fields);
  return {
    sender: message.username ?? message.bot_profile?.name ?? "",
    text,
    attachments,
    blocks: messageBlocks,
    headers,
    fields,
    links: uniqueLinks(links),
  };
}

function readAttachment(
  attachment: SlackAttachment,
  plain: (mrkdwn: string | undefined) => string,
  blocksOf: (blocks: readonly unknown[] | undefined) => string[],
  links: SlackLink[],
): AttachmentContent {
  const title = plain(attachment.title);
  if (attachment.title_link !== undefined && attachment.title_link !== "") {
    links.push(title === "" ? { url: attachment.title_link } : { url: attachment.title_link, label: title });
  }
  const seconds = Number(attachment.ts);
  const read: AttachmentContent = {
    title,
    titleLink: attachment.title_link,
    pretext: plain(attachment.pretext),
    text: plain(attachment.text),
    fallback: plain(attachment.fallback),
    footer: plain(attachment.footer),
    fields: (attachment.fields ?? []).flatMap((field) =>
      field.title === undefined || field.title === "" ? [] : [{ label: plain(field.title), value: plain(field.value) }],
    ),
    time: attachment.ts !== undefined && Number.isFinite(seconds) && seconds > 0 ? new Date(seconds * 1000) : undefined,
    blocks: blocksOf(attachment.blocks),
  };
  for (const action of attachment.actions ?? []) {
    if (action.url !== undefined) links.push(action.text === undefined ? { url: action.url } : { url: action.url, label: action.text });
  }
  return read;
}

interface ReadBlock {
  text: string;
  header?: string;
  fields: LabelledValue[];
}

/**
 * The text of one Block Kit block (docs.slack.dev "Blocks"): header and section text, section fields,
 * context elements, rich text; button URLs are collected as links. Rich text blocks give no text here:
 * Slack derives the message's `text` from them, so they would repeat it; their links are kept.
 */
function readBlock(block: unknown, plain: (mrkdwn: string | undefined) => string, links: SlackLink[]): ReadBlock {
  if (!isRecord(block)) return { text: "", fields: [] };
  const textOf = (object: unknown): string => {
    if (!isRecord(object) || typeof object.text !== "string") return "";
    return object.type === "plain_text" ? object.text : plain(object.text);
  };
  switch (block.type) {
    case "header": {
      const header = textOf(block.text);
      return { text: header, header, fields: [] };
    }
    case "section": {
      const fields = arrayOf(block.fields)
        .map(textOf)
        .filter((text) => text !== "");
      collectButton(block.accessory, links);
      return { text: [textOf(block.text), ...fields].filter((text) => text !== "").join("\n"), fields: fields.flatMap(labelledValue) };
    }
    case "context":
      return {
        text: arrayOf(block.elements)
          .map(textOf)
          .filter((text) => text !== "")
          .join(" "),
        fields: [],
      };
    case "actions":
      for (const element of arrayOf(block.elements)) collectButton(element, links);
      return { text: "", fields: [] };
    case "rich_text":
      collectRichTextLinks(block.elements, links);
      return { text: "", fields: [] };
    default:
      return { text: "", fields: [] };
  }
}

function collectButton(element: unknown, links: SlackLink[]): void {
  if (!isRecord(element) || typeof element.url !== "string") return;
  const label = isRecord(element.text) && typeof element.text.text === "string" ? element.text.text : undefined;
  links.push(label === undefined ? { url: element.url } : { url: element.url, label });
}

function collectRichTextLinks(elements: unknown, links: SlackLink[]): void {
  for (const element of arrayOf(elements)) {
    if (!isRecord(element)) continue;
    if (element.type === "link" && typeof element.url === "string") {
      links.push(typeof element.text === "string" ? { url: element.url, label: element.text } : { url: element.url });
    } else if (element.type === "text" && typeof element.text === "string") {
      for (const url of bareUrls(element.text)) links.push({ url });
    }
    collectRichTextLinks(element.elements, links);
  }
}

/** `*Service:*\ncheckout`, `*Service*: checkout` or `Service: checkout`, as Block Kit field text is written. */
export function labelledValue(text: string): LabelledValue[] {
  const match = /^\s*[*_]*([^\n:*]{1,128}?)[*_]*\s*:([\s\S]*)$/.exec(text);
  // `https://…` is a URL, not a label named "https".
  if (match !== null && !match[2]?.startsWith("//")) {
    const [, label = "", value = ""] = match;
    return [{ label: label.trim(), value: value.replace(/^\s*[*_]*/, "").trim() }];
  }
  const [label = "", ...rest] = text.split("\n");
  const cleanLabel = label.replace(/[*_]/g, "").trim();
  return rest.length > 0 && cleanLabel !== "" ? [{ label: cleanLabel, value: rest.join("\n").trim() }] : [];
}

function uniqueLinks(links: readonly SlackLink[]): SlackLink[] {
  const seen = new Map<string, SlackLink>();
  for (const link of links) {
    const known = seen.get(link.url);
    if (known === undefined || (known.label === undefined && link.label !== undefined)) seen.set(link.url, link);
  }
  return [...seen.values()];
}

function arrayOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
