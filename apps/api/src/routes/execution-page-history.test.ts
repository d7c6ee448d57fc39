import type { HistoryEntry } from "@pes/contracts";
import { HISTORY_HEADING, historyEntryText } from "@pes/memory/text";
import escapeHtml from "escape-html";
import { describe, expect, it } from "vitest";
import { renderExecutionPage } from "./execution-page.js";

const entry: HistoryEntry = {
  executionId: "e-41",
  at: "2026-11-24T18:26:00.000Z",
  playbook: "high-error-rate",
  conclusion: "cause",
  cause: { kind: "deploy", subject: "checkout<script>" },
  pageUrl: "https://pes.example.com/executions/e-41/page?sig=a&exp=1",
  similarity: 0.8,
  matched: [{ field: "cause.subject", value: "checkout<script>" }],
  differed: [],
  occurrences: { count: 1, first: "2026-11-24T18:26:00.000Z", last: "2026-11-24T18:26:00.000Z" },
};

function page(history: HistoryEntry[] | undefined): string {
  return renderExecutionPage({
    id: "e-42",
    status: "completed",
    createdAt: new Date("2026-11-27T18:30:00Z"),
    result: { highlights: "Likely cause: deploy of checkout.", ...(history === undefined ? {} : { history }) },
    charts: new Map(),
    expiresAt: new Date("2026-12-04T18:30:00Z"),
  });
}

describe("an execution page's history", () => {
  it("follows the bottom line under its heading, each past execution escaped, linking its page", () => {
    const html = page([entry]);
    const list = html.slice(html.indexOf('<ul id="history">'), html.indexOf("</ul>", html.indexOf('<ul id="history">')) + 5);
    expect(list).toBe(
      `<ul id="history"><li data-execution="e-41">${escapeHtml(historyEntryText(entry))} ` +
        `<a href="https://pes.example.com/executions/e-41/page?sig=a&amp;exp=1" rel="noopener noreferrer" target="_blank">that execution</a></li></ul>`,
    );
    expect(html.indexOf(`<h2>${HISTORY_HEADING}</h2>`)).toBeGreaterThan(html.indexOf('id="bottom-line"'));
    expect(html).not.toContain("<script>");
  });

  it("has no history section without history", () => {
    expect(page(undefined)).not.toContain('id="history"');
  });
});
