import { createHash } from "node:crypto";
import type { ExecutionHistory, PlaybookExecutionResult, UncheckedAction } from "@pes/contracts";
import { HISTORY_HEADING, historyEntryText } from "@pes/memory/text";
import escapeHtml from "escape-html";
import { budgetSection } from "./execution-page-budget.js";

/**
 * An execution's page, for people who are not in the channel and hold no token: server-rendered HTML
 * with no script, no font and nothing from elsewhere. Every value is escaped (alert, data source and
 * playbook texts alike); only http(s) URLs become links, and they open without a Referer, so that the
 * page's signed address does not travel with them.
 */

/** The page's whole style: one static sheet, allowed by its hash (no `unsafe-inline`). */
const STYLE = `
:root { color-scheme: light; --ink: #0f172a; --muted: #475569; --line: #e2e8f0; --accent: #2563eb; --bad: #b91c1c; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); background: #f8fafc; }
main { max-width: 960px; margin: 0 auto; padding: 24px 20px 48px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 10px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
h3 { font-size: 15px; margin: 14px 0 4px; }
.meta { color: var(--muted); font-size: 13px; margin: 0 0 16px; }
.bottom-line { background: #fff; border: 1px solid var(--line); border-left: 4px solid var(--accent); padding: 12px 16px; border-radius: 6px; white-space: pre-wrap; }
.error { background: #fef2f2; border: 1px solid #fecaca; color: var(--bad); padding: 10px 14px; border-radius: 6px; white-space: pre-wrap; }
.conclusion { display: inline-block; font-size: 12px; font-weight: 600; text-transform: uppercase; letter-spacing: .04em; padding: 2px 8px; border-radius: 999px; background: #e0e7ff; color: #3730a3; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 10px 14px; margin: 10px 0; }
.args { color: var(--muted); font-size: 13px; }
figure { margin: 12px 0; background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 8px; }
figure img { display: block; width: 100%; height: auto; }
figcaption { color: var(--muted); font-size: 13px; padding: 4px 4px 0; }
a { color: var(--accent); }
a.button { display: inline-block; padding: 6px 12px; border-radius: 6px; background: var(--accent); color: #fff; text-decoration: none; font-weight: 600; }
pre { background: #f1f5f9; padding: 8px 10px; border-radius: 6px; overflow-x: auto; font-size: 13px; margin: 6px 0 0; }
ul { padding-left: 20px; }
table { border-collapse: collapse; width: 100%; background: #fff; }
th, td { text-align: left; vertical-align: top; padding: 8px 10px; border-bottom: 1px solid var(--line); }
th { font-size: 13px; color: var(--muted); font-weight: 600; }
tr.exhausted td { color: var(--bad); }
footer { margin-top: 36px; color: var(--muted); font-size: 12px; }
`;

/**
 * The page's policy: nothing but this service's images and the page's own style; no script, no frame,
 * no form, no base. A value that slipped through as markup could still load nothing and run nothing.
 */
export const PAGE_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "img-src 'self'",
  `style-src 'sha256-${createHash("sha256").update(STYLE).digest("base64")}'`,
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** An execution as its page shows it. */
export interface PageView {
  id: string;
  status: "queued" | "running" | "completed" | "failed";
  createdAt: Date;
  completedAt?: Date;
  result?: PlaybookExecutionResult;
  /** The charts, by action index: where the page loads each image (a signed path on this service). */
  charts: ReadonlyMap<number, { src: string; caption: string }>;
  /** When the page's link stops working. */
  expiresAt: Date;
}

/** The page's HTML. */
export function renderExecutionPage(view: PageView): string {
  const { result } = view;
  const body = result === undefined ? pendingSection(view) : resultSections(result, view.charts);
  const verdict = result?.verdict?.conclusion;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex, nofollow">
${result === undefined ? '<meta http-equiv="refresh" content="10">\n' : ""}<title>Investigation ${text(view.id)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>Investigation${verdict === undefined ? "" : ` <span class="conclusion">${text(conclusionWords(verdict))}</span>`}</h1>
<p class="meta">Execution ${text(view.id)} · ${text(view.status)} · started ${time(view.createdAt)}${view.completedAt === undefined ? "" : ` · finished ${time(view.completedAt)}`}</p>
${body}
<footer>This page's link works until ${time(view.expiresAt)} and while the service keeps the execution. Times are UTC.</footer>
</main>
</body>
</html>
`;
}

function pendingSection(view: PageView): string {
  return `<p class="bottom-line">The investigation is ${text(view.status)}; this page looks again every 10 seconds.</p>`;
}

function resultSections(result: PlaybookExecutionResult, charts: PageView["charts"]): string {
  const sections: string[] = [];
  if (result.highlights !== undefined && result.highlights !== "") {
    sections.push(`<h2>Bottom line</h2>\n<p class="bottom-line" id="bottom-line">${text(result.highlights)}</p>`);
  }
  if (result.error !== undefined && result.error !== "") sections.push(`<p class="error" id="error">${text(result.error)}</p>`);
  if (result.history !== undefined && result.history.length > 0) sections.push(historySection(result.history));

  const gadgets = result.gadgetsHighlights ?? [];
  if (gadgets.length > 0) {
    sections.push(
      `<h2>Findings by gadget</h2>\n${gadgets
        .map((gadget) => {
          const args = Object.entries(gadget.args ?? {});
          return `<div class="card gadget"><h3>${text(gadget.title)}</h3>${
            args.length === 0 ? "" : `<p class="args">${args.map(([name, value]) => `${text(name)}: ${text(valueText(value))}`).join(", ")}</p>`
          }${gadget.highlights === undefined ? "" : `<p>${text(gadget.highlights)}</p>`}</div>`;
        })
        .join("\n")}`,
    );
  }

  const actions = result.actionResults ?? [];
  const drawn = actions.flatMap((action, index) => {
    const chart = charts.get(index);
    return chart === undefined ? [] : [{ action, chart }];
  });
  if (drawn.length > 0) {
    sections.push(
      `<h2>Charts</h2>\n${drawn
        .map(
          ({ action, chart }) =>
            `<figure class="chart"><img src="${text(chart.src)}" alt="${text(chart.caption)}" width="800" height="320"><figcaption>${text(action.title ?? chart.caption)}</figcaption></figure>`,
        )
        .join("\n")}`,
    );
  }

  const mitigations = result.actionableMitigations ?? [];
  if (mitigations.length > 0) {
    sections.push(
      `<h2>Mitigations</h2>\n${mitigations
        .map((mitigation) => {
          const name = mitigation.customName ?? mitigation.toolName;
          const target = httpUrl(mitigation.url);
          const button =
            target === undefined
              ? ""
              : ` <a class="button" href="${text(target)}" rel="noopener noreferrer" target="_blank">Open ${text(mitigation.toolName)}</a>`;
          const action = mitigation.action === undefined ? "" : `<pre>${text(JSON.stringify(mitigation.action, null, 2))}</pre>`;
          const shownUrl = mitigation.url !== undefined && target === undefined ? `<p class="args">${text(mitigation.url)}</p>` : "";
          return `<div class="card mitigation"><h3>${text(name)}</h3><p>${text(mitigation.toolName)}${button}</p>${shownUrl}${action}</div>`;
        })
        .join("\n")}`,
    );
  }

  if (actions.length > 0) {
    sections.push(
      `<h2>Actions</h2>\n<table id="actions"><thead><tr><th>Action</th><th>Answer</th><th>Open</th></tr></thead><tbody>\n${actions
        .map((action) => {
          const target = httpUrl(action.mostImportantLink);
          const link = target === undefined ? "" : `<a href="${text(target)}" rel="noopener noreferrer" target="_blank">in its tool</a>`;
          return `<tr><td>${text(action.title ?? "")}</td><td>${text(action.shortAnswer ?? "")}</td><td>${link}</td></tr>`;
        })
        .join("\n")}\n</tbody></table>`,
    );
  }

  const unchecked = result.verdict?.unchecked ?? [];
  const budget = budgetSection(result.budget);
  if (budget !== "") sections.push(budget);
  sections.push(
    `<h2>What could not be checked</h2>\n${
      unchecked.length === 0
        ? `<p id="unchecked">Every action answered.</p>`
        : `<ul id="unchecked">${unchecked.map((item) => `<li>${text(item.action)}: ${text(uncheckedWords(item))}</li>`).join("")}</ul>`
    }`,
  );
  return sections.join("\n");
}

/** Similar past executions, below the bottom line and never part of it: each in words, with its page when it has one. */
function historySection(history: ExecutionHistory): string {
  const items = history.map((entry) => {
    const target = httpUrl(entry.pageUrl);
    const link = target === undefined ? "" : ` <a href="${text(target)}" rel="noopener noreferrer" target="_blank">that execution</a>`;
    return `<li data-execution="${text(entry.executionId)}">${text(historyEntryText(entry))}${link}</li>`;
  });
  return `<h2>${text(HISTORY_HEADING)}</h2>\n<ul id="history">${items.join("")}</ul>`;
}

function uncheckedWords(item: UncheckedAction): string {
  switch (item.reason) {
    case "failed":
      return item.error;
    case "not-run":
      return `not run: the issue lacks ${item.missing.join(", ")}`;
    case "no-data":
      return `no data (${item.noData})`;
  }
}

function conclusionWords(conclusion: string): string {
  return conclusion === "cause"
    ? "likely cause found"
    : conclusion === "ambiguous"
      ? "two candidates"
      : conclusion === "no-cause"
        ? "no cause found"
        : conclusion;
}

/** An http(s) URL as it may be linked; anything else (a `javascript:` target) is not made a link. */
function httpUrl(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    const parsed = new URL(url);
    return parsed.protocol === "https:" || parsed.protocol === "http:" ? parsed.href : undefined;
  } catch {
    return undefined;
  }
}

function valueText(value: unknown): string {
  return typeof value === "string" ? value : (JSON.stringify(value) ?? "");
}

function time(date: Date): string {
  return `${date.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

/** Text (and attribute values: quotes are escaped too) as HTML shows it. */
function text(value: string): string {
  return escapeHtml(value);
}
