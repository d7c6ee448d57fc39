import type { ActionResult } from "@pes/contracts";
import type { EnrichmentView } from "../delivery/enrichment-view.js";
import { feedbackActionsBlock, type FeedbackBlock } from "./feedback-blocks.js";
import { escapeAndClip, slackLink } from "./slack-mrkdwn.js";

/**
 * Slack's limits on one message (docs.slack.dev, Block Kit reference): 50 blocks, 3000 characters of
 * section text. The whole message's blocks are refused (`msg_blocks_too_long`) at about 13,200 characters
 * in practice (slackapi/bolt-js#2509), under the documented 40,000: we keep to 12,000.
 */
export const SLACK_LIMITS = { blocksPerMessage: 50, sectionChars: 3_000, messageChars: 12_000 } as const;

/** Blocks we post: mrkdwn sections marked `verbatim` (Slack turns no bare URL, `@here` or `#name` into a link) and dividers. */
export type EnrichmentBlock = { type: "section"; text: { type: "mrkdwn"; text: string; verbatim: true } } | { type: "divider" } | FeedbackBlock;

/** One message to post: its blocks, and the plain `text` notifications and old clients show instead. */
export interface SlackPostMessage {
  text: string;
  blocks: EnrichmentBlock[];
}

export interface RenderOptions {
  /**
   * At most this many messages: the first is the root (or the reply), the others continue it in its
   * thread. What does not fit is left out, with a last line saying how much. Default 5.
   */
  maxMessages?: number;
}

// Per-field caps (escaped characters): a single huge value cannot push the rest out of the message.
const TITLE_CHARS = 300;
const HIGHLIGHTS_CHARS = 6_000;
const ERROR_CHARS = 1_500;
const GADGET_HIGHLIGHTS_CHARS = 2_000;
const ARGS_CHARS = 500;
const ACTION_CHARS = 600;
const MITIGATION_VALUE_CHARS = 300;
const MITIGATION_PARAMS = 10;
const ROOT_LINKS = 5;
const FALLBACK_CHARS = 1_000;
/** Room kept in the last message for the line saying what was left out. */
const OMISSION_RESERVE_CHARS = 200;

/**
 * The result as Slack messages, in reading order and within Slack's limits: the bottom line (which names
 * the likely cause), the key links, then each gadget's findings with their actions' answers and links,
 * then the mitigations. Everything that came from the alert, data sources or the playbook is escaped.
 * Pure: the same view always gives the same messages, so a retried post sends the same thing.
 */
export function renderEnrichment(view: EnrichmentView, options: RenderOptions = {}): SlackPostMessage[] {
  const { result } = view;
  const sections: Section[] = [];
  const summary = [
    ...(view.heading === undefined ? [] : [`_${escapeAndClip(view.heading, TITLE_CHARS)}_`]),
    `:mag: *${view.title === undefined || view.title === "" ? "Playbook findings" : escapeAndClip(view.title, TITLE_CHARS)}*`,
    ...(result.highlights === undefined || result.highlights === "" ? [] : splitLines(escapeAndClip(result.highlights, HIGHLIGHTS_CHARS))),
  ];
  sections.push(...toSections(summary));
  if (result.error !== undefined && result.error !== "") {
    sections.push(...toSections([`:warning: ${escapeAndClip(result.error, ERROR_CHARS)}`]));
  }
  const links = (result.actionResults ?? [])
    .filter((action) => action.mostImportantLink !== undefined)
    .slice(0, ROOT_LINKS)
    .map((action) => slackLink(action.mostImportantLink ?? "", clipLabel(action.title ?? "link")));
  // The whole investigation, charts included, for people who are not in the channel (a signed link).
  if (result.pageUrl !== undefined) links.unshift(slackLink(result.pageUrl, "Investigation page"));
  if (links.length > 0) sections.push(...toSections([`*Links:* ${links.join("  ·  ")}`]));

  const actions = result.actionResults ?? [];
  const gadgets = result.gadgetsHighlights ?? [];
  const grouped = view.actionGadgets !== undefined && view.actionGadgets.length === actions.length;
  if (gadgets.length > 0 || actions.length > 0) sections.push(DIVIDER);
  gadgets.forEach((gadget, gadgetIndex) => {
    const lines = [`*${escapeAndClip(gadget.title, TITLE_CHARS)}*`];
    if (gadget.highlights !== undefined && gadget.highlights !== "") {
      lines.push(...splitLines(escapeAndClip(gadget.highlights, GADGET_HIGHLIGHTS_CHARS)));
    }
    const args = Object.entries(gadget.args ?? {});
    if (args.length > 0) lines.push(`_${escapeAndClip(args.map(([key, value]) => `${key}: ${valueText(value)}`).join(", "), ARGS_CHARS)}_`);
    if (grouped) {
      actions.forEach((action, index) => {
        if (view.actionGadgets?.[index] === gadgetIndex) lines.push(actionLine(action));
      });
    }
    sections.push(...toSections(lines));
  });
  if (!grouped && actions.length > 0) {
    sections.push(...toSections(["*Action results*", ...actions.map(actionLine)]));
  }

  const mitigations = result.actionableMitigations ?? [];
  if (mitigations.length > 0) {
    // One list, as few sections as fit: a playbook with many mitigations should not use up the blocks.
    const lines = ["*Mitigations*"];
    for (const mitigation of mitigations) {
      const name = escapeAndClip(mitigation.customName ?? mitigation.toolName, TITLE_CHARS);
      const link = mitigation.url === undefined ? "" : `  ${slackLink(mitigation.url, `Open in ${clipLabel(mitigation.toolName)}`)}`;
      const params = Object.entries(mitigation.action ?? {});
      lines.push(
        `• *${name}*${link}`,
        ...params
          .slice(0, MITIGATION_PARAMS)
          .map(([key, value]) => `    ${escapeAndClip(key, 100)}: ${escapeAndClip(valueText(value), MITIGATION_VALUE_CHARS)}`),
        ...(params.length > MITIGATION_PARAMS ? [`    _and ${params.length - MITIGATION_PARAMS} more parameters_`] : []),
      );
    }
    sections.push(DIVIDER, ...toSections(lines));
  }
  const buttons = view.feedback === undefined ? undefined : feedbackActionsBlock(view.feedback.reference);
  const messages = pack(sections, fallbackText(view), Math.max(1, options.maxMessages ?? 5), buttons === undefined ? 0 : 1);
  // The buttons close the root message: what the verdict said is just above them.
  if (buttons !== undefined) messages[0]?.blocks.push(buttons);
  return messages;
}

/** The root of a batch's thread: says what the batch is; each issue's result follows as a reply. */
export function renderBatchRoot(batch: { title?: string; itemCount: number }): SlackPostMessage {
  const title = batch.title === undefined || batch.title === "" ? "Playbook findings" : escapeAndClip(batch.title, TITLE_CHARS);
  const count = `${batch.itemCount} issue${batch.itemCount === 1 ? "" : "s"}`;
  return {
    text: `${title}: ${count}`,
    blocks: [section(`:mag: *${title}* — ${count}\nThe findings for each issue follow in this thread, one reply per issue, in order.`)],
  };
}

type Section = { type: "section"; text: { type: "mrkdwn"; text: string; verbatim: true } } | { type: "divider" };
const DIVIDER: Section = { type: "divider" };

function section(text: string): Section {
  return { type: "section", text: { type: "mrkdwn", text, verbatim: true } };
}

/** Lines (each escaped mrkdwn) as sections of at most `sectionChars`; a longer line is wrapped. */
function toSections(lines: readonly string[]): Section[] {
  const out: Section[] = [];
  let current = "";
  for (const line of lines.flatMap((line) => wrap(line, SLACK_LIMITS.sectionChars))) {
    if (current !== "" && current.length + 1 + line.length > SLACK_LIMITS.sectionChars) {
      out.push(section(current));
      current = "";
    }
    current = current === "" ? line : `${current}\n${line}`;
  }
  if (current !== "") out.push(section(current));
  return out;
}

/** Splits escaped text at its line breaks, so that a long text can spread over several sections. */
function splitLines(escaped: string): string[] {
  return escaped.split("\n").filter((line) => line.trim() !== "");
}

/**
 * Escaped mrkdwn as pieces of at most `max` characters, broken at spaces outside links. A link is never
 * cut (one longer than `max` is dropped: the caps keep links far shorter); a word longer than `max` is cut
 * between entities and surrogate pairs.
 */
function wrap(line: string, max: number): string[] {
  if (line.length <= max) return [line];
  const pieces: string[] = [];
  let current = "";
  for (const atom of line.match(/<[^>]*>|[^\s<]+|\s+|</g) ?? []) {
    if (current.length + atom.length <= max) {
      current += atom;
      continue;
    }
    if (current.trim() !== "") pieces.push(current.trimEnd());
    current = "";
    if (atom.trim() === "" || (atom.startsWith("<") && atom.length > max)) continue;
    let rest = atom;
    while (rest.length > max) {
      const at = safeCut(rest, max);
      pieces.push(rest.slice(0, at));
      rest = rest.slice(at);
    }
    current = rest;
  }
  if (current.trim() !== "") pieces.push(current.trimEnd());
  return pieces;
}

/** The largest cut position ≤ `max` that splits neither an entity (`&amp;`) nor a surrogate pair. */
function safeCut(text: string, max: number): number {
  let at = max;
  const amp = text.lastIndexOf("&", at - 1);
  if (amp !== -1 && text.indexOf(";", amp) >= at && text.indexOf(";", amp) - amp <= 5) at = amp;
  if (at > 0 && /[\uD800-\uDBFF]/.test(text.charAt(at - 1))) at -= 1;
  return Math.max(1, at);
}

function actionLine(action: ActionResult): string {
  const answer = escapeAndClip(action.shortAnswer ?? action.title ?? "(no answer)", ACTION_CHARS);
  const link = action.mostImportantLink === undefined ? "" : ` — ${slackLink(action.mostImportantLink, "open")}`;
  return `• ${answer}${link}`;
}

function clipLabel(label: string): string {
  // slackLink escapes the label: clip the plain text, leaving room for entities.
  return label.length > 80 ? `${label.slice(0, 79)}…` : label;
}

function valueText(value: unknown): string {
  if (typeof value === "string") return value;
  const json = JSON.stringify(value);
  return json === undefined ? String(value) : json;
}

function fallbackText(view: EnrichmentView): string {
  const title = view.title === undefined || view.title === "" ? "Playbook findings" : view.title;
  const bottom = view.result.highlights ?? view.result.error ?? "";
  return escapeAndClip(`${view.heading === undefined ? "" : `${view.heading}: `}${title}${bottom === "" ? "" : `: ${bottom}`}`, FALLBACK_CHARS);
}

function textLength(block: Section): number {
  return block.type === "section" ? block.text.text.length : 0;
}

/**
 * Sections into at most `maxMessages` messages of at most 50 blocks and `messageChars` characters each,
 * in order; a divider never starts or ends a message. What does not fit is counted in a last line.
 */
function pack(sections: readonly Section[], text: string, maxMessages: number, reservedInRoot: number): SlackPostMessage[] {
  const messages: EnrichmentBlock[][] = [[]];
  let chars = 0;
  let index = 0;
  for (; index < sections.length; index += 1) {
    const block = sections[index];
    if (block === undefined) break;
    const current = messages[messages.length - 1] ?? [];
    const last = messages.length === maxMessages;
    const blockRoom = SLACK_LIMITS.blocksPerMessage - (last ? 1 : 0) - (messages.length === 1 ? reservedInRoot : 0);
    const charRoom = SLACK_LIMITS.messageChars - (last ? OMISSION_RESERVE_CHARS : 0);
    if (current.length + 1 <= blockRoom && chars + textLength(block) <= charRoom) {
      if (!(block.type === "divider" && current.length === 0)) current.push(block);
      chars += textLength(block);
      continue;
    }
    if (last) break;
    while (current[current.length - 1]?.type === "divider") current.pop();
    messages.push(block.type === "divider" ? [] : [block]);
    chars = textLength(block);
  }
  const lastMessage = messages[messages.length - 1] ?? [];
  while (lastMessage[lastMessage.length - 1]?.type === "divider") lastMessage.pop();
  const left = sections.slice(index).filter((block) => block.type === "section").length;
  if (left > 0) lastMessage.push(section(`_${left} more section${left === 1 ? "" : "s"} not shown: the result is larger than Slack's message limits._`));
  return messages.filter((blocks) => blocks.length > 0).map((blocks, position) => ({ text: position === 0 ? text : `(continued) ${text}`, blocks }));
}
