import type { HistoryEntry, PlaybookExecutionResult } from "@pes/contracts";
import { HISTORY_HEADING, historyEntryText } from "@pes/memory/text";
import { describe, expect, it } from "vitest";
import { markOf, renderTeamsMessage } from "./teams-card.js";

const entry: HistoryEntry = {
  executionId: "e-41",
  at: "2026-11-24T18:26:00.000Z",
  playbook: "high-error-rate",
  conclusion: "cause",
  cause: { kind: "deploy", subject: "checkout" },
  pageUrl: "https://pes.example.com/executions/e-41/page",
  similarity: 0.8,
  matched: [{ field: "cause.subject", value: "checkout" }],
  differed: [],
  occurrences: { count: 2, first: "2026-11-20T09:00:00.000Z", last: "2026-11-24T18:26:00.000Z" },
};

describe("a Teams card's history", () => {
  it("follows the bottom line under its heading, each past execution as text with a button to its page", () => {
    const result: PlaybookExecutionResult = { highlights: "Likely cause: deploy of checkout.", history: [entry] };
    const card = JSON.parse(renderTeamsMessage({ result }, markOf("e-42:t/c:0")).attachments[0].content) as { body: Array<Record<string, unknown>> };
    const shown = card.body.map((element) =>
      element.type === "RichTextBlock"
        ? { text: (element.inlines as Array<{ text: string }>).map((inline) => inline.text).join("") }
        : { actions: (element.actions as Array<{ url: string; title: string }>).map(({ url, title }) => ({ url, title })) },
    );
    expect(shown).toEqual([
      { text: "Playbook findings" },
      { text: "Likely cause: deploy of checkout." },
      { text: HISTORY_HEADING },
      { text: `• ${historyEntryText(entry)}` },
      { actions: [{ url: "https://pes.example.com/executions/e-41/page", title: "Open that execution" }] },
    ]);
  });
});
