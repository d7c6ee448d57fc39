import { findStartTime } from "../alert-time.js";
import { labelledValue, type MessageContent } from "../message-content.js";
import { allText, distinctTitles, firstLine, labelName, labelsFromFields, type ParsedAlertMessage } from "./alert-parser.js";

/** `name = value`, bulleted or not: labels as Prometheus-style templates list them. */
const EQUALS_LINE = /^\s*(?:[-•*]\s+)?([A-Za-z_][A-Za-z0-9_]*)\s+=\s+(.+)$/;
/** A `Key: value` line short enough to be a labelled value rather than a sentence. */
const MAX_LABELLED_LINE = 300;

/**
 * Any other message (Slack's documented message parts: `text`, `attachments[].{title, title_link,
 * text, fields, fallback, pretext}`, `blocks[]` header, section text and fields, context):
 * - title: the first header block, else the first attachment title, else the first line of the text,
 *   of the first block, or of the attachment's fallback;
 * - labels: `name = value` lines of the text (the first of each name is kept);
 * - fields: attachment and section fields, then `Key: value` lines of the text (labels become names as
 *   `Alert Name` → `alert_name`; the first of each name is kept);
 * - start time: a `Started:`/`Starts at:`/`Triggered at:` line with a time, if any.
 */
export function parseGenericMessage(content: MessageContent): ParsedAlertMessage {
  const text = allText(content);
  const titleCandidates = distinctTitles([
    content.headers[0],
    ...content.attachments.map((attachment) => attachment.title),
    firstLine(content.text),
    content.blocks[0] === undefined ? undefined : firstLine(content.blocks[0]),
    ...content.attachments.map((attachment) => firstLine(attachment.text) ?? firstLine(attachment.fallback)),
  ]);

  const labels = new Map<string, string>();
  const fields = labelsFromFields(content.fields);
  for (const line of text.split("\n")) {
    const equals = EQUALS_LINE.exec(line);
    if (equals !== null) {
      const [, name = "", value = ""] = equals;
      if (!labels.has(name)) labels.set(name, value.trim());
      continue;
    }
    if (line.length > MAX_LABELLED_LINE) continue;
    for (const field of labelledValue(line)) {
      const name = labelName(field.label);
      if (name !== undefined && field.value !== "" && !fields.has(name)) fields.set(name, field.value);
    }
  }

  const parsed: ParsedAlertMessage = {
    source: "generic",
    title: titleCandidates[0] ?? "",
    titleCandidates,
    labels: Object.fromEntries(labels),
    fields: Object.fromEntries(fields),
    details: text,
    links: content.links,
  };
  const startsAt = findStartTime(text);
  if (startsAt !== undefined) parsed.startsAt = startsAt;
  return parsed;
}
