import type { FeedbackEntry } from "@pes/contracts";
import { escapeAndClip } from "./slack-mrkdwn.js";

/*
 * The feedback buttons under a result posted to Slack, the line saying what was answered, and the modal
 * where someone says what the cause was and what fixed it. Slack sends a click (`block_actions`) and a
 * modal's submission (`view_submission`) to the app's interactivity Request URL; every button's `value`
 * and the modal's `private_metadata` carry the signed reference of the execution (feedbackReference of
 * @pes/signed-links): that, not anything else in the payload, says which organization and execution.
 */

/** The block holding the buttons; its action ids say which button it was. */
export const FEEDBACK_ACTIONS_BLOCK_ID = "pes_feedback";
/** The line saying the current answer, above the buttons once someone answered. */
export const FEEDBACK_STATUS_BLOCK_ID = "pes_feedback_status";
/** The modal's `callback_id`. */
export const FEEDBACK_MODAL_CALLBACK_ID = "pes_feedback";
export const FEEDBACK_ACTIONS = { right: "pes_feedback_right", wrong: "pes_feedback_wrong", details: "pes_feedback_details" } as const;

/** The modal's inputs: block id → action id (the same string), as `view.state.values` returns them. */
export const FEEDBACK_MODAL_INPUTS = {
  verdict: "pes_verdict",
  causeKind: "pes_cause_kind",
  causeSubject: "pes_cause_subject",
  causeText: "pes_cause_text",
  resolution: "pes_resolution",
} as const;

/** The Block Kit blocks these functions make, beside the result's own. */
export type FeedbackBlock =
  | {
      type: "actions";
      block_id: string;
      elements: Array<{ type: "button"; action_id: string; text: { type: "plain_text"; text: string }; value: string; style?: "primary" | "danger" }>;
    }
  | { type: "context"; block_id: string; elements: Array<{ type: "mrkdwn"; text: string; verbatim: true }> };

/** Slack refuses a button value over 2000 characters. */
const BUTTON_VALUE_MAX = 2_000;

/** The three buttons, each carrying the execution's signed reference; none when the reference cannot fit. */
export function feedbackActionsBlock(reference: string): FeedbackBlock | undefined {
  if (reference.length > BUTTON_VALUE_MAX) return undefined;
  const button = (action_id: string, text: string, style?: "primary" | "danger") => ({
    type: "button" as const,
    action_id,
    text: { type: "plain_text" as const, text },
    value: reference,
    ...(style === undefined ? {} : { style }),
  });
  return {
    type: "actions",
    block_id: FEEDBACK_ACTIONS_BLOCK_ID,
    elements: [
      button(FEEDBACK_ACTIONS.right, "Right cause", "primary"),
      button(FEEDBACK_ACTIONS.wrong, "Wrong cause", "danger"),
      button(FEEDBACK_ACTIONS.details, "Add what fixed it"),
    ],
  };
}

/** The line saying the current answer: which, by whom (a mention of the Slack user), the cause and what fixed it, escaped. */
export function feedbackStatusBlock(entry: FeedbackEntry): FeedbackBlock {
  const who = entry.by?.via === "slack" && entry.by.subject !== undefined && /^[UW][A-Z0-9]{2,30}$/.test(entry.by.subject) ? ` by <@${entry.by.subject}>` : "";
  const parts = [entry.verdict === "right" ? `:white_check_mark: *Right cause*, confirmed${who}` : `:x: *Wrong cause*, said${who}`];
  const { cause } = entry;
  if (cause !== undefined) {
    const named = [cause.kind, cause.subject].filter((part) => part !== undefined).join(" ");
    const said = [named, cause.text].filter((part) => part !== undefined && part !== "").join(": ");
    parts.push(`the cause: ${escapeAndClip(said, 500)}`);
  }
  if (entry.resolution !== undefined) parts.push(`fixed by: ${escapeAndClip(entry.resolution, 500)}`);
  return { type: "context", block_id: FEEDBACK_STATUS_BLOCK_ID, elements: [{ type: "mrkdwn", text: parts.join(" · "), verbatim: true }] };
}

/**
 * A message's blocks (as Slack returned them) with the line of the current answer: it replaces the one
 * there, or goes just above the buttons (at the end when there are none). The buttons stay, so that an
 * answer can be changed.
 */
export function withFeedbackStatus(blocks: readonly unknown[], entry: FeedbackEntry): unknown[] {
  const status = feedbackStatusBlock(entry);
  const without = blocks.filter((block) => blockIdOf(block) !== FEEDBACK_STATUS_BLOCK_ID);
  const at = without.findIndex((block) => blockIdOf(block) === FEEDBACK_ACTIONS_BLOCK_ID);
  return at === -1 ? [...without, status] : [...without.slice(0, at), status, ...without.slice(at)];
}

function blockIdOf(block: unknown): unknown {
  return typeof block === "object" && block !== null && "block_id" in block ? block.block_id : undefined;
}

/** Where a modal's answer goes back: the execution's reference, and the message to update. */
export interface FeedbackModalTarget {
  reference: string;
  channel: string;
  ts: string;
  threadTs?: string;
}

/**
 * The modal "What was the cause?" (`views.open` with the click's `trigger_id`): right or wrong, the
 * actual cause as a verdict's kind and subject or in words, and what fixed it. Its `private_metadata`
 * says where the answer goes back.
 */
export function feedbackModal(target: FeedbackModalTarget, initialVerdict: "right" | "wrong"): Record<string, unknown> {
  const option = (value: string, text: string) => ({ value, text: { type: "plain_text", text } });
  const options = [option("right", "Right cause"), option("wrong", "Wrong cause")];
  const input = (id: string, label: string, hint: string, multiline = false) => ({
    type: "input",
    block_id: id,
    optional: true,
    label: { type: "plain_text", text: label },
    hint: { type: "plain_text", text: hint },
    element: { type: "plain_text_input", action_id: id, multiline, max_length: multiline ? 2_000 : 500 },
  });
  return {
    type: "modal",
    callback_id: FEEDBACK_MODAL_CALLBACK_ID,
    private_metadata: JSON.stringify(target),
    title: { type: "plain_text", text: "What was the cause?" },
    submit: { type: "plain_text", text: "Save" },
    close: { type: "plain_text", text: "Cancel" },
    blocks: [
      {
        type: "input",
        block_id: FEEDBACK_MODAL_INPUTS.verdict,
        label: { type: "plain_text", text: "The investigation's cause was" },
        element: {
          type: "radio_buttons",
          action_id: FEEDBACK_MODAL_INPUTS.verdict,
          options,
          initial_option: options[initialVerdict === "right" ? 0 : 1],
        },
      },
      input(FEEDBACK_MODAL_INPUTS.causeKind, "Actual cause: kind", "As the verdict names kinds: deploy, config, saturation, oom, upstream, node…"),
      input(FEEDBACK_MODAL_INPUTS.causeSubject, "Actual cause: what it is about", "The deployment, service, node or series, e.g. checkout"),
      input(FEEDBACK_MODAL_INPUTS.causeText, "Actual cause, in words", "When no kind fits", true),
      input(FEEDBACK_MODAL_INPUTS.resolution, "What fixed it", "The change or action that ended the incident", true),
    ],
  };
}

/**
 * The answer in a submitted modal's `view.state.values`, as a FeedbackInput to validate (empty inputs
 * left out); `blockOf` maps each FeedbackInput path back to the input that holds it, for Slack's
 * `response_action: "errors"`.
 */
export function feedbackFromModal(values: unknown): Record<string, unknown> {
  const inputValue = (id: string): unknown => {
    const block = typeof values === "object" && values !== null ? (values as Record<string, unknown>)[id] : undefined;
    const element = typeof block === "object" && block !== null ? (block as Record<string, unknown>)[id] : undefined;
    if (typeof element !== "object" || element === null) return undefined;
    if ("selected_option" in element) {
      const selected = element.selected_option;
      return typeof selected === "object" && selected !== null && "value" in selected ? selected.value : undefined;
    }
    return "value" in element && typeof element.value === "string" && element.value.trim() !== "" ? element.value : undefined;
  };
  const kind = inputValue(FEEDBACK_MODAL_INPUTS.causeKind);
  const subject = inputValue(FEEDBACK_MODAL_INPUTS.causeSubject);
  const text = inputValue(FEEDBACK_MODAL_INPUTS.causeText);
  const resolution = inputValue(FEEDBACK_MODAL_INPUTS.resolution);
  const cause = {
    ...(kind === undefined ? {} : { kind }),
    ...(subject === undefined ? {} : { subject }),
    ...(text === undefined ? {} : { text }),
  };
  return {
    verdict: inputValue(FEEDBACK_MODAL_INPUTS.verdict),
    ...(Object.keys(cause).length === 0 ? {} : { cause }),
    ...(resolution === undefined ? {} : { resolution }),
  };
}

/** The modal input that holds a FeedbackInput field (an issue's path), for Slack's inline errors. */
export function modalBlockOf(path: readonly PropertyKey[]): string {
  const [first, second] = path;
  if (first === "resolution") return FEEDBACK_MODAL_INPUTS.resolution;
  if (first === "cause")
    return second === "subject" ? FEEDBACK_MODAL_INPUTS.causeSubject : second === "text" ? FEEDBACK_MODAL_INPUTS.causeText : FEEDBACK_MODAL_INPUTS.causeKind;
  return FEEDBACK_MODAL_INPUTS.verdict;
}
