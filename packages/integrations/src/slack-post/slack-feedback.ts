import type { FeedbackEntry } from "@pes/contracts";
import type { WebClient } from "@slack/web-api";
import { feedbackModal, withFeedbackStatus, type FeedbackModalTarget } from "./feedback-blocks.js";
import { callSlack } from "./slack-calls.js";

/*
 * What the API does in Slack when someone answers on a result: show the answer on the result's message
 * (chat.update) and open the modal asking what the cause was (views.open). A module of its own, exported
 * as `@pes/integrations/slack-feedback`, so that the API loads Slack's client and nothing else of the
 * integrations.
 */

export { createSlackPostClient } from "./slack-calls.js";
export {
  FEEDBACK_ACTIONS,
  FEEDBACK_MODAL_CALLBACK_ID,
  feedbackFromModal,
  modalBlockOf,
  withFeedbackStatus,
  type FeedbackModalTarget,
} from "./feedback-blocks.js";

/** The message that was answered on: where it is, and its blocks when the interaction carried them. */
export interface AnsweredMessage {
  channel: string;
  ts: string;
  /** Its thread's root, when it is a reply in a thread. */
  threadTs?: string;
  /** The blocks as Slack sent them with a click; absent (a modal's submission), they are read first. */
  blocks?: readonly unknown[];
}

/**
 * Shows the current answer on the message, above its buttons (chat.update with its blocks and the
 * answer's line). Reads the message first (conversations.history or .replies) when the blocks are not at
 * hand. Throws a SlackCallError naming Slack's error code when it cannot.
 */
export async function showFeedback(client: WebClient, message: AnsweredMessage, entry: FeedbackEntry, deadline: number): Promise<void> {
  const bounds = { deadline };
  let blocks = message.blocks;
  if (blocks === undefined) {
    const bound = { channel: message.channel, latest: message.ts, oldest: message.ts, inclusive: true, limit: 1 };
    const answer = await callSlack(
      () => (message.threadTs === undefined ? client.conversations.history(bound) : client.conversations.replies({ ...bound, ts: message.threadTs })),
      bounds,
    );
    blocks = (answer.messages ?? []).find((found) => found.ts === message.ts)?.blocks ?? [];
  }
  await callSlack(() => client.chat.update({ channel: message.channel, ts: message.ts, blocks: withFeedbackStatus(blocks, entry) as never }), bounds);
}

/** Opens the modal asking what the cause was and what fixed it, for the click's `trigger_id` (valid 3 seconds). */
export async function openFeedbackModal(
  client: WebClient,
  triggerId: string,
  target: FeedbackModalTarget,
  verdict: "right" | "wrong",
  deadline: number,
): Promise<void> {
  await callSlack(() => client.views.open({ trigger_id: triggerId, view: feedbackModal(target, verdict) as never }), { deadline });
}
