import { createHash } from "node:crypto";
import type { ActionResult } from "@pes/contracts";
import type { EnrichmentView } from "../delivery/enrichment-view.js";
import { cardLine, cardLink, cardText } from "./card-text.js";

/**
 * Teams refuses a message larger than about 28 KB, its request body included. We keep the whole
 * request under 26 KB: room for Graph's envelope and for a few escapes our count missed.
 */
export const TEAMS_LIMITS = { messageBytes: 26 * 1024, charts: 6, links: 5 } as const;

/** What a Teams post shows besides the result: the evidence charts and the result's own page. */
export interface TeamsCardExtras {
  /** Charts as signed URLs (https): each an Image element, never inlined (Teams' 28 KB). */
  charts?: readonly { title: string; url: string }[];
  /** A link to the whole result: an "Open the full result" button. */
  pageUrl?: string;
}

export type TeamsView = EnrichmentView & TeamsCardExtras;

/** One Adaptive Card element as we write it. */
type CardElement = Record<string, unknown>;

/** A chatMessage carrying one Adaptive Card, as Graph's `POST …/messages` and `…/replies` take it. */
export interface TeamsChatMessage {
  body: { contentType: "html"; content: string };
  /** Plain text for notifications and previews. */
  summary: string;
  attachments: [{ id: string; contentType: "application/vnd.microsoft.card.adaptive"; content: string }];
}

const CARD_TYPE = "application/vnd.microsoft.card.adaptive";
// Per-field caps (characters): a single huge value cannot push the rest out of the card.
const TITLE_CHARS = 300;
const HIGHLIGHTS_CHARS = 6_000;
const ERROR_CHARS = 1_500;
const GADGET_HIGHLIGHTS_CHARS = 2_000;
const ARGS_CHARS = 500;
const ACTION_CHARS = 600;
const BUTTON_CHARS = 60;
const MITIGATION_VALUE_CHARS = 300;
const MITIGATION_PARAMS = 10;
const SUMMARY_CHARS = 250;

/**
 * The result as one Adaptive Card message, within Teams' size: the bottom line (which names the likely
 * cause), the charts, the key links, then each gadget's findings with their actions' answers and links,
 * then the mitigations; what does not fit is left out from the end, and a last line says how many
 * findings and mitigations that was. `mark` is the attachment's id: unique per post, so that a retry can
 * find the message it may already have posted. Pure: the same view gives the same message.
 */
export function renderTeamsMessage(view: TeamsView, mark: string): TeamsChatMessage {
  const { result } = view;
  const head: CardElement[] = [];
  if (view.heading !== undefined) head.push(runs([{ text: cardLine(view.heading, TITLE_CHARS), isSubtle: true, italic: true }]));
  head.push(runs([{ text: cardLine(titleOf(view), TITLE_CHARS), weight: "Bolder", size: "Medium" }], { style: "heading" }));
  if (result.highlights !== undefined && result.highlights !== "") head.push(...paragraphs(cardText(result.highlights, HIGHLIGHTS_CHARS)));
  if (result.error !== undefined && result.error !== "") head.push(runs([{ text: cardText(result.error, ERROR_CHARS), color: "Attention" }]));

  const charts = (view.charts ?? []).flatMap((chart) => {
    const url = cardLink(chart.url, { httpsOnly: true });
    return url === undefined ? [] : [{ type: "Image", url, altText: cardLine(chart.title, TITLE_CHARS), size: "Stretch" }];
  });
  for (const chart of charts.slice(0, TEAMS_LIMITS.charts)) head.push(chart);
  const rootLinks = buttons(
    (result.actionResults ?? []).flatMap((action) =>
      action.mostImportantLink === undefined ? [] : [{ url: action.mostImportantLink, title: action.title ?? "link" }],
    ),
    TEAMS_LIMITS.links,
  );
  if (rootLinks !== undefined) head.push(rootLinks);

  // Findings and mitigations, each a block that is shown whole or not at all.
  const blocks: { kind: "finding" | "mitigation"; elements: CardElement[] }[] = [];
  const actions = result.actionResults ?? [];
  const grouped = view.actionGadgets !== undefined && view.actionGadgets.length === actions.length;
  (result.gadgetsHighlights ?? []).forEach((gadget, gadgetIndex) => {
    const elements: CardElement[] = [runs([{ text: cardLine(gadget.title, TITLE_CHARS), weight: "Bolder" }], { separator: true })];
    if (gadget.highlights !== undefined && gadget.highlights !== "") elements.push(...paragraphs(cardText(gadget.highlights, GADGET_HIGHLIGHTS_CHARS)));
    const args = Object.entries(gadget.args ?? {});
    if (args.length > 0)
      elements.push(runs([{ text: cardLine(args.map(([key, value]) => `${key}: ${valueText(value)}`).join(", "), ARGS_CHARS), italic: true, isSubtle: true }]));
    if (grouped) elements.push(...actionElements(actions.filter((_, index) => view.actionGadgets?.[index] === gadgetIndex)));
    blocks.push({ kind: "finding", elements });
  });
  if (!grouped && actions.length > 0) {
    blocks.push({ kind: "finding", elements: [runs([{ text: "Action results", weight: "Bolder" }], { separator: true }), ...actionElements(actions)] });
  }
  (result.actionableMitigations ?? []).forEach((mitigation, index) => {
    const params = Object.entries(mitigation.action ?? {});
    const elements: CardElement[] = [
      ...(index === 0 ? [runs([{ text: "Mitigations", weight: "Bolder" }], { separator: true })] : []),
      runs([{ text: `• ${cardLine(mitigation.customName ?? mitigation.toolName, TITLE_CHARS)}`, weight: "Bolder" }]),
      ...params
        .slice(0, MITIGATION_PARAMS)
        .map(([key, value]) => runs([{ text: `${cardLine(key, 100)}: ${cardText(valueText(value), MITIGATION_VALUE_CHARS)}`, isSubtle: true }])),
      ...(params.length > MITIGATION_PARAMS
        ? [runs([{ text: `and ${params.length - MITIGATION_PARAMS} more parameters`, italic: true, isSubtle: true }])]
        : []),
    ];
    const open = mitigation.url === undefined ? undefined : buttons([{ url: mitigation.url, title: `Open in ${mitigation.toolName}` }], 1);
    if (open !== undefined) elements.push(open);
    blocks.push({ kind: "mitigation", elements });
  });

  const pageUrl = view.pageUrl === undefined ? undefined : cardLink(view.pageUrl);
  const cardActions: CardElement[] = pageUrl === undefined ? [] : [{ type: "Action.OpenUrl", title: "Open the full result", url: pageUrl }];
  // A card posted through Graph as a user sends no Action.Submit or Action.Execute back to the service
  // (only a bot receives them): the feedback buttons open the execution's signed feedback page instead.
  const feedbackUrl = view.feedback?.url === undefined ? undefined : cardLink(view.feedback.url);
  if (feedbackUrl !== undefined) {
    cardActions.push(
      { type: "Action.OpenUrl", title: "Right cause", url: `${feedbackUrl}&verdict=right` },
      { type: "Action.OpenUrl", title: "Wrong cause", url: `${feedbackUrl}&verdict=wrong` },
    );
  }
  const summary = summaryOf(view);
  const message = (body: CardElement[]) => chatMessage(mark, summary, body, cardActions);

  // Whole blocks, in order, while the message fits with room for the omission line.
  const reserve = bytesOf(omission(blocks.length, blocks.length));
  let body = [...head];
  let shown = 0;
  for (const block of blocks) {
    const next = [...body, ...block.elements];
    if (bytesOf(message(next)) + reserve > TEAMS_LIMITS.messageBytes) break;
    body = next;
    shown += 1;
  }
  const left = blocks.slice(shown);
  if (left.length > 0) body.push(omission(left.filter((block) => block.kind === "finding").length, left.filter((block) => block.kind === "mitigation").length));
  // The head alone can only be too large with many long charts' URLs: drop charts, then links.
  let candidate = message(body);
  while (bytesOf(candidate) > TEAMS_LIMITS.messageBytes) {
    const index = body.findLastIndex((element) => element.type === "Image" || element.type === "ActionSet");
    if (index === -1) break;
    body.splice(index, 1);
    candidate = message(body);
  }
  return candidate;
}

/** The root of a batch's thread: says what the batch is; each issue's result follows as a reply. */
export function renderTeamsBatchRoot(batch: { title?: string; itemCount: number }, mark: string): TeamsChatMessage {
  const title = batch.title === undefined || batch.title === "" ? "Playbook findings" : cardLine(batch.title, TITLE_CHARS);
  const count = `${batch.itemCount} issue${batch.itemCount === 1 ? "" : "s"}`;
  return chatMessage(
    mark,
    `${title}: ${count}`,
    [
      runs([{ text: `${title} — ${count}`, weight: "Bolder", size: "Medium" }], { style: "heading" }),
      runs([{ text: "The findings for each issue follow in this thread, one reply per issue, in order." }]),
    ],
    [],
  );
}

/** The attachment id marking the post of `partKey`: 32 hex characters, as Graph's examples use. */
export function markOf(partKey: string): string {
  return createHash("sha256").update(partKey).digest("hex").slice(0, 32);
}

function chatMessage(mark: string, summary: string, body: CardElement[], actions: CardElement[]): TeamsChatMessage {
  const card = {
    type: "AdaptiveCard",
    $schema: "http://adaptivecards.io/schemas/adaptive-card.json",
    version: "1.5",
    msteams: { width: "Full" },
    body,
    ...(actions.length === 0 ? {} : { actions }),
  };
  return {
    body: { contentType: "html", content: `<attachment id="${mark}"></attachment>` },
    summary,
    attachments: [{ id: mark, contentType: CARD_TYPE, content: JSON.stringify(card) }],
  };
}

interface Run {
  text: string;
  weight?: "Bolder";
  size?: "Medium";
  italic?: true;
  isSubtle?: true;
  color?: "Attention";
}

/** One RichTextBlock of TextRuns: text shown as written, never read as Markdown. */
function runs(inlines: readonly Run[], options: { separator?: true; style?: "heading" } = {}): CardElement {
  return {
    type: "RichTextBlock",
    ...(options.separator === undefined ? {} : { separator: true, spacing: "Medium" }),
    ...(options.style === undefined ? {} : { style: options.style }),
    inlines: inlines.map((inline) => ({ type: "TextRun", ...inline })),
  };
}

/** A text's non-empty lines, each a block of its own (a TextRun shows no line breaks reliably). */
function paragraphs(text: string): CardElement[] {
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => runs([{ text: line }]));
}

function actionElements(actions: readonly ActionResult[]): CardElement[] {
  const lines = actions.map((action) => runs([{ text: `• ${cardText(action.shortAnswer ?? action.title ?? "(no answer)", ACTION_CHARS)}` }]));
  const links = buttons(
    actions.flatMap((action) => (action.mostImportantLink === undefined ? [] : [{ url: action.mostImportantLink, title: action.title ?? "open" }])),
    TEAMS_LIMITS.links,
  );
  return links === undefined ? lines : [...lines, links];
}

/** Buttons opening the http(s) links among `links`, at most `max`; undefined when none is left. */
function buttons(links: readonly { url: string; title: string }[], max: number): CardElement | undefined {
  const actions = links
    .flatMap((link) => {
      const url = cardLink(link.url);
      return url === undefined ? [] : [{ type: "Action.OpenUrl", title: cardLine(link.title, BUTTON_CHARS), url }];
    })
    .slice(0, max);
  return actions.length === 0 ? undefined : { type: "ActionSet", actions };
}

function omission(findings: number, mitigations: number): CardElement {
  const parts = [
    ...(findings > 0 ? [`${findings} more finding${findings === 1 ? "" : "s"}`] : []),
    ...(mitigations > 0 ? [`${mitigations} more mitigation${mitigations === 1 ? "" : "s"}`] : []),
  ];
  return runs([{ text: `…and ${parts.join(" and ")} not shown: the result is larger than a Teams message (28 KB).`, italic: true, isSubtle: true }], {
    separator: true,
  });
}

function titleOf(view: TeamsView): string {
  return view.title === undefined || view.title === "" ? "Playbook findings" : view.title;
}

function summaryOf(view: TeamsView): string {
  const bottom = view.result.highlights ?? view.result.error ?? "";
  return cardLine(`${view.heading === undefined ? "" : `${view.heading}: `}${titleOf(view)}${bottom === "" ? "" : `: ${bottom}`}`, SUMMARY_CHARS);
}

function valueText(value: unknown): string {
  if (typeof value === "string") return value;
  const json = JSON.stringify(value);
  return json === undefined ? String(value) : json;
}

function bytesOf(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value));
}
