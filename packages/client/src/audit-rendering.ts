import { AuditEntryPoint, type AuditEntry, type AuditPage } from "@pes/contracts";
import { terminalSafe } from "./result-rendering.js";

const HEADINGS = ["FINISHED", "OUTCOME", "PLAYBOOK", "ASKED BY", "ENTRY", "QUERIES", "SENT", "EXECUTION"] as const;

/**
 * A page of the audit trail for a person: a table, a row per execution (newest first), then, with
 * `details` (one execution asked for), every query as sent and every request to a service with its size.
 */
export function renderAuditPage(page: AuditPage, options: { details?: boolean } = {}): string {
  if (page.records.length === 0) return `No audit records.${nextLine(page)}\n`;
  const rows = page.records.map(row);
  const widths = HEADINGS.map((heading, column) => Math.max(heading.length, ...rows.map((cells) => (cells[column] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join("  ")
      .trimEnd();
  const table = [line(HEADINGS), ...rows.map(line)].join("\n");
  const details = options.details === true ? page.records.map(detailsOf).join("") : "";
  return `${table}\n${details}${nextLine(page)}`;
}

function row(entry: AuditEntry): string[] {
  const asked = entry.requestedBy === undefined ? "-" : (entry.requestedBy.subject ?? `client ${entry.requestedBy.clientId}`);
  const bytes = entry.sent.reduce((sum, sent) => sum + sent.bytes, 0);
  return [
    entry.finishedAt,
    entry.outcome + (entry.conclusion === undefined ? "" : ` (${entry.conclusion})`),
    entry.playbook.name === "" ? "-" : entry.playbook.name,
    asked,
    entryOf(entry),
    String(entry.queries.length),
    entry.sent.length === 0 ? "-" : `${entry.sent.length} (${bytes} B)`,
    entry.executionId,
  ].map(terminalSafe);
}

const [, AlertEntry, ChatEntry] = AuditEntryPoint.options;

function entryOf(entry: AuditEntry): string {
  const point = entry.requestedBy?.entry;
  if (point === undefined) return "-";
  const alert = AlertEntry.safeParse(point);
  if (alert.success) {
    const { sender, alert: which } = alert.data;
    return `alert from ${sender}${which.alertname === undefined ? "" : ` ${which.alertname}`}`;
  }
  const chat = ChatEntry.safeParse(point);
  if (chat.success) return `chat link ${chat.data.messageLink}`;
  return "route" in point && typeof point.route === "string" ? point.route : point.kind;
}

function detailsOf(entry: AuditEntry): string {
  const lines = [
    "",
    `Execution ${entry.executionId} (request ${entry.requestId}), playbook ${entry.playbook.name || "-"} ${entry.playbook.version ?? ""}`.trimEnd(),
    ...(entry.requestedBy === undefined
      ? []
      : [
          `  asked by: ${entry.requestedBy.subject ?? "-"}, client ${entry.requestedBy.clientId}, teams ${(entry.requestedBy.teams ?? []).join(", ") || "-"}; ${entryOf(entry)}`,
        ]),
    ...(entry.error === undefined ? [] : [`  error: ${entry.error}`]),
    `  queries sent (${entry.queries.length}):`,
    ...entry.queries.map(
      (query) =>
        `    ${query.dataSource ?? "-"} (${query.connector ?? "-"}) ${query.action} [${query.window.start} .. ${query.window.end}]: ${JSON.stringify(query.query)}`,
    ),
    `  sent to services (${entry.sent.length}):`,
    ...entry.sent.map((sent) => `    ${sent.service} ${sent.method} ${sent.url} ${sent.bytes} B${sent.status === undefined ? "" : ` -> ${sent.status}`}`),
    ...(entry.evidenceSha256 === undefined ? [] : [`  evidence bundle sha256: ${entry.evidenceSha256}`]),
  ];
  return `${lines.map(terminalSafe).join("\n")}\n`;
}

function nextLine(page: AuditPage): string {
  return page.next === undefined ? "" : `\nMore: --cursor ${page.next}`;
}
