import type { FeedbackEntry } from "@pes/contracts";
import { describe, expect, it } from "vitest";
import { renderTeamsMessage } from "../teams-post/teams-card.js";
import { renderEnrichment } from "./enrichment-blocks.js";
import {
  FEEDBACK_ACTIONS,
  FEEDBACK_ACTIONS_BLOCK_ID,
  FEEDBACK_MODAL_INPUTS,
  FEEDBACK_STATUS_BLOCK_ID,
  feedbackFromModal,
  feedbackModal,
  modalBlockOf,
  withFeedbackStatus,
} from "./feedback-blocks.js";

const REFERENCE = "/view/execution/0b9c7f4e-1d7a-4b8e-9f51-5e6f7a8b9c0d/feedback?org=acme&exp=1900000000&sig=abc";
const result = { highlights: "Root cause: the rollout of payments v2.4.0" };

describe("the feedback buttons on a Slack result", () => {
  it("end the root message, each carrying the execution's reference; none without one", () => {
    const [root] = renderEnrichment({ result, feedback: { reference: REFERENCE } });
    const last = root?.blocks[root.blocks.length - 1];
    expect(last).toMatchObject({ type: "actions", block_id: FEEDBACK_ACTIONS_BLOCK_ID });
    expect(last?.type === "actions" ? last.elements.map((button) => [button.action_id, button.value]) : []).toEqual([
      [FEEDBACK_ACTIONS.right, REFERENCE],
      [FEEDBACK_ACTIONS.wrong, REFERENCE],
      [FEEDBACK_ACTIONS.details, REFERENCE],
    ]);
    const [plain] = renderEnrichment({ result });
    expect(plain?.blocks.some((block) => block.type === "actions")).toBe(false);
  });

  it("keep the root within Slack's 50 blocks however long the result", () => {
    const gadgetsHighlights = Array.from({ length: 80 }, (_, i) => ({ title: `Gadget ${i}`, highlights: "x" }));
    const messages = renderEnrichment({ result: { ...result, gadgetsHighlights }, feedback: { reference: REFERENCE } });
    expect(messages[0]?.blocks.length).toBeLessThanOrEqual(50);
    expect(messages[0]?.blocks.at(-1)?.type).toBe("actions");
    expect(messages.slice(1).every((message) => message.blocks.every((block) => block.type !== "actions"))).toBe(true);
  });

  it("get the answer's line above them, replaced when the answer changes, with alert-like text escaped", () => {
    const [root] = renderEnrichment({ result, feedback: { reference: REFERENCE } });
    const right: FeedbackEntry = { verdict: "right", by: { via: "slack", subject: "U0ALICE01" }, at: "2026-11-21T14:00:00.000Z" };
    const once = withFeedbackStatus(root?.blocks ?? [], right);
    const wrong: FeedbackEntry = {
      verdict: "wrong",
      cause: { kind: "deploy", subject: "<!channel>" },
      resolution: "rolled back & <https://evil.example|ok>",
      by: { via: "slack", subject: "U0BOB0001" },
      at: "2026-11-21T14:05:00.000Z",
    };
    const twice = withFeedbackStatus(once, wrong) as Array<{ block_id?: string; elements?: Array<{ text: string }> }>;
    expect(twice.filter((block) => block.block_id === FEEDBACK_STATUS_BLOCK_ID)).toHaveLength(1);
    expect(twice.slice(-2).map((block) => block.block_id)).toEqual([FEEDBACK_STATUS_BLOCK_ID, FEEDBACK_ACTIONS_BLOCK_ID]);
    const line = twice.at(-2)?.elements?.[0]?.text ?? "";
    expect(line).toContain("<@U0BOB0001>");
    expect(line).not.toContain("<!channel>");
    expect(line).not.toContain("<https://evil.example");
  });

  it("open a modal whose answer reads back as a FeedbackInput, and whose errors land on their inputs", () => {
    const modal = feedbackModal({ reference: REFERENCE, channel: "C1", ts: "1.000001" }, "wrong");
    expect(JSON.parse(String(modal.private_metadata))).toEqual({ reference: REFERENCE, channel: "C1", ts: "1.000001" });
    const values = {
      [FEEDBACK_MODAL_INPUTS.verdict]: { [FEEDBACK_MODAL_INPUTS.verdict]: { selected_option: { value: "wrong" } } },
      [FEEDBACK_MODAL_INPUTS.causeKind]: { [FEEDBACK_MODAL_INPUTS.causeKind]: { value: "deploy" } },
      [FEEDBACK_MODAL_INPUTS.causeSubject]: { [FEEDBACK_MODAL_INPUTS.causeSubject]: { value: "  " } },
      [FEEDBACK_MODAL_INPUTS.resolution]: { [FEEDBACK_MODAL_INPUTS.resolution]: { value: "Rolled back" } },
    };
    expect(feedbackFromModal(values)).toEqual({ verdict: "wrong", cause: { kind: "deploy" }, resolution: "Rolled back" });
    expect(modalBlockOf(["cause", "subject"])).toBe(FEEDBACK_MODAL_INPUTS.causeSubject);
    expect(modalBlockOf(["resolution"])).toBe(FEEDBACK_MODAL_INPUTS.resolution);
  });
});

describe("the feedback buttons on a Teams card", () => {
  it("open the signed feedback page, one per answer; none without its link", () => {
    const url = `https://pes.example${REFERENCE}`;
    const card = JSON.parse(renderTeamsMessage({ result, feedback: { reference: REFERENCE, url } }, "m").attachments[0].content) as {
      actions?: Array<{ type: string; title: string; url: string }>;
    };
    expect(card.actions?.map(({ type, title, url: target }) => [type, title, target])).toEqual([
      ["Action.OpenUrl", "Right cause", `${url}&verdict=right`],
      ["Action.OpenUrl", "Wrong cause", `${url}&verdict=wrong`],
    ]);
    const plain = JSON.parse(renderTeamsMessage({ result, feedback: { reference: REFERENCE } }, "m").attachments[0].content) as { actions?: unknown[] };
    expect(plain.actions).toBeUndefined();
  });
});
