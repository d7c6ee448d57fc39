import type { LabelledValue, MessageContent } from "../message-content.js";
import type { SlackLink } from "../slack-text.js";

/** Which tool's message format a parser recognized. */
export type AlertSource = "alertmanager" | "grafana" | "datadog" | "pagerduty" | "generic";

/** What a chat message says about the alert it carries. */
export interface ParsedAlertMessage {
  source: AlertSource;
  /** The alert's title as people read it, without status decoration (`[FIRING:1]`, `[Triggered on …]`). */
  title: string;
  /**
   * Every name the alert goes by, most telling first, `title` included: the alert's summary, its rule
   * or monitor name, the title as posted. Each is tried in turn against the playbooks' monitor names.
   */
  titleCandidates: string[];
  /**
   * The name/value pairs the alert itself carries, names as written: its labels (Alertmanager, Grafana),
   * scope tags (Datadog), `name = value` lines.
   */
  labels: Record<string, string>;
  /**
   * The labelled values the tool displays about the alert (attachment and section fields, `Key: value`
   * lines), named from their labels (`Alert Name` → `alert_name`): the tool's words, not the alert's
   * (PagerDuty's `Service` is a PagerDuty service), so they only fill in what the labels lack.
   */
  fields: Record<string, string>;
  /** The message as plain text: what the tool wrote about the alert. */
  details: string;
  /** When the alert started, where the message says so. */
  startsAt?: Date;
  /** Every link in the message (incident references are read from them). */
  links: SlackLink[];
}

/** One tool's format: recognizes a message and reads it, or answers undefined for another tool's. */
export interface AlertParser {
  source: AlertSource;
  parse(content: MessageContent): ParsedAlertMessage | undefined;
}

/**
 * The message's text parts joined, attachments after the message's own. With blocks, the message's
 * `text` is only the notification fallback (docs.slack.dev `chat.postMessage`): the blocks are read
 * instead.
 */
export function allText(content: MessageContent): string {
  const parts = [
    ...(content.blocks.length > 0 ? content.blocks : [content.text]),
    ...content.attachments.flatMap((attachment) => [
      attachment.pretext,
      attachment.title,
      attachment.text,
      ...attachment.fields.map((field) => `${field.label}: ${field.value}`),
      ...attachment.blocks,
      attachment.footer,
    ]),
  ];
  return parts.filter((part) => part.trim() !== "").join("\n\n");
}

/**
 * A field label as an attribute name: `Alert Name:` → `alert_name`. Undefined when it cannot be one, or
 * reads like a sentence (more than four words or 40 characters) rather than a label.
 */
export function labelName(label: string): string | undefined {
  const words = label
    .replace(/[*_`:]+$/g, "")
    .trim()
    .split(/[\s-]+/);
  const name = words.join("_").toLowerCase();
  return words.length <= 4 && name.length <= 40 && /^[a-z_][a-z0-9_]*$/.test(name) ? name : undefined;
}

/** Labelled values as labels (`Service: checkout` → `service=checkout`), the first of each name kept. */
export function labelsFromFields(fields: readonly LabelledValue[]): Map<string, string> {
  const labels = new Map<string, string>();
  for (const field of fields) {
    const name = labelName(field.label);
    if (name !== undefined && !labels.has(name) && field.value.trim() !== "") labels.set(name, field.value.trim());
  }
  return labels;
}

/** Distinct, non-blank titles, first occurrence kept. */
export function distinctTitles(titles: ReadonlyArray<string | undefined>): string[] {
  return [...new Set(titles.map((title) => title?.trim() ?? "").filter((title) => title !== ""))];
}

/** The first non-blank line of a text, without mrkdwn emphasis around it (`*High CPU*`). */
export function firstLine(text: string): string | undefined {
  const line = text.split("\n").find((candidate) => candidate.trim() !== "");
  return line === undefined ? undefined : stripEmphasis(line.trim());
}

/** `*x*`, `_x_`, `**x**` → `x`. */
export function stripEmphasis(text: string): string {
  const match = /^([*_~]{1,2})(.+)\1$/.exec(text);
  return match?.[2]?.trim() ?? text;
}
