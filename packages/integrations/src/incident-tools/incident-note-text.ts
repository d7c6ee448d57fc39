import type { PlaybookExecutionResult } from "@pes/contracts";

/**
 * The most a note holds. Opsgenie refuses notes over 25,000 characters (its Alert API schema,
 * AddNoteRequest.note maxLength); PagerDuty's REST reference states no limit for incident notes. A note is
 * read by someone handling an incident, on a phone as often as not: we keep well under both.
 */
export const INCIDENT_NOTE_MAX_CHARS = 10_000;

const FIELD_CHARS = { title: 300, highlights: 4_000, error: 1_000, gadget: 1_000, action: 400, mitigationValue: 200 } as const;
const MITIGATION_PARAMS = 10;

export interface IncidentNoteView {
  result: PlaybookExecutionResult;
  /** The issue's title. */
  title?: string;
  /** The Slack thread where the result was posted, when it was. */
  enrichmentLink?: string;
  /** The execution's id: the note's last line names it, and a retry finds the note by it. */
  executionId: string;
}

/**
 * The last line of every note we add, naming its execution: how a retry that lost the tool's answer
 * recognises the note it may have added. Bracketed so that one id is never a prefix match of another.
 */
export function executionMark(executionId: string): string {
  return `(playbook execution ${executionId})`;
}

/**
 * The result as a plain-text note: the bottom line, the Slack thread, the error if any, each gadget's
 * finding, the actions' answers with their links, the mitigations, then the execution's mark. At most
 * `maxChars`: what does not fit is left out, saying so, and the mark is always kept. Control characters
 * other than line breaks and tabs are dropped.
 */
export function renderIncidentNote(view: IncidentNoteView, maxChars = INCIDENT_NOTE_MAX_CHARS): string {
  const { result } = view;
  const head: string[] = [`Playbook findings${view.title === undefined || view.title === "" ? "" : `: ${clip(view.title, FIELD_CHARS.title)}`}`];
  if (result.highlights !== undefined && result.highlights !== "") head.push(clip(result.highlights, FIELD_CHARS.highlights));
  if (view.enrichmentLink !== undefined) head.push(`Slack thread: ${view.enrichmentLink}`);
  if (result.error !== undefined && result.error !== "") head.push(`Error: ${clip(result.error, FIELD_CHARS.error)}`);

  const body: string[] = [];
  const gadgets = result.gadgetsHighlights ?? [];
  if (gadgets.length > 0) {
    body.push("", "Findings:");
    for (const gadget of gadgets) {
      body.push(`- ${clip(gadget.title, FIELD_CHARS.title)}${gadget.highlights === undefined ? "" : `: ${clip(gadget.highlights, FIELD_CHARS.gadget)}`}`);
    }
  }
  const actions = result.actionResults ?? [];
  if (actions.length > 0) {
    body.push("", "Action results:");
    for (const action of actions) {
      const answer = clip(action.shortAnswer ?? action.title ?? "(no answer)", FIELD_CHARS.action);
      body.push(`- ${answer}${action.mostImportantLink === undefined ? "" : ` (${action.mostImportantLink})`}`);
    }
  }
  const mitigations = result.actionableMitigations ?? [];
  if (mitigations.length > 0) {
    body.push("", "Mitigations:");
    for (const mitigation of mitigations) {
      body.push(`- ${clip(mitigation.customName ?? mitigation.toolName, FIELD_CHARS.title)}${mitigation.url === undefined ? "" : `: ${mitigation.url}`}`);
      const params = Object.entries(mitigation.action ?? {});
      for (const [key, value] of params.slice(0, MITIGATION_PARAMS)) {
        body.push(`    ${clip(key, 100)}: ${clip(typeof value === "string" ? value : (JSON.stringify(value) ?? String(value)), FIELD_CHARS.mitigationValue)}`);
      }
      if (params.length > MITIGATION_PARAMS) body.push(`    and ${params.length - MITIGATION_PARAMS} more parameters`);
    }
  }

  const mark = ["", executionMark(view.executionId)];
  const lines = [...head, ...body].map(clean);
  const room = maxChars - mark.join("\n").length - 1;
  const kept: string[] = [];
  let length = 0;
  for (const [index, line] of lines.entries()) {
    const omission = `… ${lines.length - index} more lines not shown.`;
    const reserve = index === lines.length - 1 ? 0 : omission.length + 1;
    if (length + line.length + 1 + reserve > room) {
      kept.push(omission);
      break;
    }
    kept.push(line);
    length += line.length + 1;
  }
  return [...kept, ...mark].join("\n");
}

function clip(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join("")}…`;
}

/** Drops control characters (a note is plain text): keeps tabs and the line's own content. */
function clean(line: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
  return line.replace(/[\u0000-\u0008\u000B-\u001F\u007F]/g, "");
}
