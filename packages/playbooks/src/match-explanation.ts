import {
  utcIssueTime,
  type AlertmanagerAlert,
  type AttributeSource,
  type PlaybookExecutionInput,
  type PlaybookMatchResult,
  type TriedTitle,
  type ValidationIssue,
} from "@pes/contracts";
import { alertTime, alertTitles, labelAttributes, resolveAlert } from "./alert-execution.js";
import type { MonitorNameExplanation } from "./monitor-name-matcher.js";
import { missingAttributes, resolveExecution, type ResolveExecutionOptions, type ResolveExecutionOrganization } from "./resolve-execution.js";

type Attributes = PlaybookMatchResult["attributes"];

/**
 * What `POST /playbook/execution` would do with this body, and why, running nothing: its verdict
 * (`issues`) is resolveExecution's own, the rest explains it. A message link is not explained: the
 * contract (PlaybookMatchInput) refuses it before.
 */
export function explainExecution(input: PlaybookExecutionInput, org: ResolveExecutionOrganization, options: ResolveExecutionOptions): PlaybookMatchResult {
  const resolved = resolveExecution(input, org, options);
  const issues = resolved.ok ? [] : withBody(resolved.issues);
  const fixedBook = input.bookName !== undefined && org.playbooks.has(input.bookName) ? input.bookName : undefined;

  const titles: TriedTitle[] = [];
  let chosen: MonitorNameExplanation | undefined;
  if (input.title !== undefined) {
    const monitorNames = org.matcher.explain(input.title, fixedBook === undefined ? {} : { bookName: fixedBook });
    chosen = monitorNames.find((verdict) => verdict.verdict === "chosen");
    titles.push({ source: "title", text: input.title, matched: chosen !== undefined, monitorNames });
  }
  // An unknown bookName chooses nothing, and then neither does the title (resolveExecution's rule).
  const bookName = input.bookName !== undefined ? fixedBook : chosen?.bookName;

  const attributes: Attributes = {};
  if (bookName !== undefined) {
    addAttributes(attributes, chosen?.captured ?? {}, "title");
    addAttributes(attributes, input.attributes ?? {}, "explicit");
  }
  return {
    wouldRun: issues.length === 0,
    issues,
    ...chosenPlaybook(bookName, input.bookName !== undefined ? "bookName" : "monitorName", chosen),
    titles,
    attributes,
    ...attributeVerdict(org, bookName, attributes),
    time: input.time === undefined ? options.now.toISOString() : utcIssueTime(input.time),
    timeSource: input.time === undefined ? "now" : "explicit",
  };
}

/**
 * What `POST /webhooks/alertmanager` would do with this alert, and why, running nothing: its verdict
 * (`issues`) is resolveAlert's own, the rest explains it. A resolved alert starts nothing.
 */
export function explainAlert(alert: AlertmanagerAlert, org: Pick<ResolveExecutionOrganization, "matcher" | "playbooks">, now: Date): PlaybookMatchResult {
  const resolved = resolveAlert(alert, org, now);
  const issues: ValidationIssue[] = [];
  if (alert.status === "resolved") issues.push({ path: ["body", "alert", "status"], message: "a resolved alert starts nothing" });
  if (!resolved.ok && resolved.reason === "no_playbook") issues.push({ path: ["body", "alert"], message: resolved.message });
  if (!resolved.ok && resolved.reason === "missing_attributes") {
    for (const name of resolved.missing) {
      issues.push({
        path: ["body", "alert", "labels", name],
        message: `Required attribute ${JSON.stringify(name)} is missing: add the label, or capture it in a monitor name`,
      });
    }
  }

  // The texts in the order the webhook tries them, up to the first that matches.
  const titles: TriedTitle[] = [];
  let chosen: MonitorNameExplanation | undefined;
  for (const { source, text } of alertTitles(alert)) {
    const monitorNames = org.matcher.explain(text);
    chosen = monitorNames.find((verdict) => verdict.verdict === "chosen");
    titles.push({ source, text, matched: chosen !== undefined, monitorNames });
    if (chosen !== undefined) break;
  }

  const playbook = chosen === undefined ? undefined : org.playbooks.get(chosen.bookName);
  const attributes: Attributes = {};
  let ignoredLabels = Object.keys(alert.labels).map((name) => ({ name, reason: "no playbook matched" }));
  if (playbook !== undefined) {
    const labels = labelAttributes(alert.labels, playbook);
    addAttributes(attributes, chosen?.captured ?? {}, "title");
    addAttributes(attributes, labels.attributes, "labels");
    ignoredLabels = labels.ignored;
  }
  return {
    wouldRun: issues.length === 0,
    issues,
    ...chosenPlaybook(playbook?.name, "monitorName", chosen),
    titles,
    attributes,
    ignoredLabels,
    ...attributeVerdict(org, playbook?.name, attributes),
    time: alertTime(alert, now),
    timeSource: alert.startsAt === undefined ? "now" : "startsAt",
  };
}

function chosenPlaybook(
  bookName: string | undefined,
  chosenBy: "bookName" | "monitorName",
  chosen: MonitorNameExplanation | undefined,
): Pick<PlaybookMatchResult, "bookName" | "chosenBy" | "monitorName"> {
  if (bookName === undefined) return {};
  return { bookName, chosenBy, ...(chosen === undefined ? {} : { monitorName: chosen.monitorName }) };
}

function attributeVerdict(
  org: Pick<ResolveExecutionOrganization, "playbooks">,
  bookName: string | undefined,
  attributes: Attributes,
): Pick<PlaybookMatchResult, "requiredAttributes" | "missingAttributes"> {
  const playbook = bookName === undefined ? undefined : org.playbooks.get(bookName);
  const values = Object.fromEntries(Object.entries(attributes).map(([name, { value }]) => [name, value]));
  return { requiredAttributes: playbook?.requiredAttributes ?? [], missingAttributes: missingAttributes(playbook, values) };
}

/** Later sources override earlier ones, as in the execution. */
function addAttributes(into: Attributes, values: Readonly<Record<string, string>>, source: AttributeSource): void {
  for (const [name, value] of Object.entries(values)) into[name] = { value, source };
}

function withBody(issues: readonly ValidationIssue[]): ValidationIssue[] {
  return issues.map((issue) => ({ path: ["body", ...issue.path], message: issue.message }));
}
