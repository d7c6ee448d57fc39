import type { HistoryEntry, PlaybookExecutionResult } from "@pes/contracts";
import { HISTORY_HEADING, historyEntryText } from "@pes/memory/text";
import { describe, expect, it } from "vitest";
import { renderEnrichment } from "./enrichment-blocks.js";
import { escapeAndClip, slackLink } from "./slack-mrkdwn.js";

const entry: HistoryEntry = {
  executionId: "e-41",
  at: "2026-11-24T18:26:00.000Z",
  playbook: "high-error-rate",
  conclusion: "cause",
  cause: { kind: "deploy", subject: "checkout <!here>", detail: "checkout:v<num>" },
  pageUrl: "https://pes.example.com/executions/e-41/page",
  similarity: 0.8,
  matched: [{ field: "cause.subject", value: "checkout <!here>" }],
  differed: [],
  occurrences: { count: 2, first: "2026-11-20T09:00:00.000Z", last: "2026-11-24T18:26:00.000Z" },
  confirmed: { verdict: "right", resolution: "rolled back" },
};
const result: PlaybookExecutionResult = {
  highlights: "Likely cause: deploy of checkout to checkout:v1.42.",
  history: [entry],
  actionResults: [{ title: "Rollouts of checkout", shortAnswer: "checkout:v1.42 at 18:26", mostImportantLink: "https://deploys.example/checkout" }],
};

const sections = (result: PlaybookExecutionResult) =>
  renderEnrichment({ result }).flatMap((message) => message.blocks.flatMap((block) => (block.type === "section" ? block.text.text.split("\n") : [])));

describe("a Slack post's history", () => {
  it("follows the bottom line, under its heading, each past execution escaped and linked to its page", () => {
    const lines = sections(result);
    const bottom = lines.indexOf("Likely cause: deploy of checkout to checkout:v1.42.");
    expect(lines.slice(bottom + 1, bottom + 3)).toEqual([
      `:repeat: *${HISTORY_HEADING}*`,
      `• ${escapeAndClip(historyEntryText(entry), 700)} ${slackLink("https://pes.example.com/executions/e-41/page", "page")}`,
    ]);
    expect(lines.some((line) => line.includes("<!here>"))).toBe(false);
  });

  it("is absent without history", () => {
    const { history: _, ...without } = result;
    expect(sections(without)).not.toContain(`:repeat: *${HISTORY_HEADING}*`);
  });
});
