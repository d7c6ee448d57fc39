import { utcIssueTime, type AlertmanagerAlert, type TitleSource } from "@pes/contracts";
import { normalizeText, type MonitorNameMatch } from "./monitor-name-matcher.js";
import type { PlaybookDefinition } from "./playbook-definition.js";
import { attributeNamesOf, missingAttributes, type ResolveExecutionOrganization, type ResolvedExecution } from "./resolve-execution.js";

/** As the API's `title` and `details` and the job's attribute values (packages/contracts execution-input.ts). */
const MAX_TITLE_LENGTH = 1024;
const MAX_DETAILS_LENGTH = 16_384;
const MAX_VALUE_LENGTH = 1024;

/** An alert's text tried against the monitor names, and where it came from. */
export interface AlertTitle {
  source: Extract<TitleSource, "labels.alertname" | "annotations.summary">;
  text: string;
}

/** A firing alert, resolved: what its execution runs, with the alert's text as title and description as details. */
export interface ResolvedAlert extends ResolvedExecution {
  /** The alert text that matched. */
  title: string;
  /** `annotations.description`, when the alert has one. */
  details?: string;
  /** The monitor name that matched. */
  monitorName: string;
}

export type ResolveAlertResult =
  | { ok: true; value: ResolvedAlert }
  | { ok: false; reason: "no_playbook"; message: string }
  | { ok: false; reason: "missing_attributes"; message: string; bookName: string; missing: string[] };

/**
 * The texts of an alert tried against the monitor names, in order: its `alertname` label (the alert
 * rule's name, which its author chose), then its `summary` annotation (often templated with label
 * values, as monitor names with placeholders expect). Blank texts and repeats are left out; each is cut
 * to 1024 characters, as the API's `title`.
 */
export function alertTitles(alert: Pick<AlertmanagerAlert, "labels" | "annotations">): AlertTitle[] {
  const titles: AlertTitle[] = [];
  const candidates: [AlertTitle["source"], string | undefined][] = [
    ["labels.alertname", alert.labels.alertname],
    ["annotations.summary", alert.annotations?.summary],
  ];
  for (const [source, raw] of candidates) {
    const text = raw === undefined ? "" : clip(normalizeText(raw), MAX_TITLE_LENGTH);
    if (text !== "" && !titles.some((title) => title.text === text)) titles.push({ source, text });
  }
  return titles;
}

/**
 * The labels that become attributes of a playbook's execution: those named like one of its attributes
 * (attributeNamesOf), with a non-blank value of at most 1024 characters (trimmed). Only those: the
 * others (`instance`, `severity`, a replica label…) would make issues that the playbook treats alike
 * look different, and identical investigations would not be shared. `ignored` says why each other label
 * was left out.
 */
export function labelAttributes(
  labels: Readonly<Record<string, string>>,
  playbook: PlaybookDefinition,
): { attributes: Record<string, string>; ignored: { name: string; reason: string }[] } {
  const known = attributeNamesOf(playbook);
  const attributes: Record<string, string> = {};
  const ignored: { name: string; reason: string }[] = [];
  for (const [name, raw] of Object.entries(labels)) {
    const value = raw.trim();
    if (!known.has(name)) ignored.push({ name, reason: `not an attribute of playbook ${JSON.stringify(playbook.name)}` });
    else if (value === "") ignored.push({ name, reason: "blank" });
    else if (value.length > MAX_VALUE_LENGTH) ignored.push({ name, reason: `longer than ${MAX_VALUE_LENGTH} characters` });
    else attributes[name] = value;
  }
  return { attributes, ignored };
}

/** The first of the alert's texts that matches a monitor name, and which. */
export function matchAlert(
  titles: readonly AlertTitle[],
  org: Pick<ResolveExecutionOrganization, "matcher">,
): { title: AlertTitle; match: MonitorNameMatch } | undefined {
  for (const title of titles) {
    const match = org.matcher.match(title.text);
    if (match !== undefined) return { title, match };
  }
  return undefined;
}

/**
 * Resolves a firing alert into an execution, as the webhook does and `POST /playbook/match` predicts:
 * - playbook: the first of alertTitles that matches a monitor name (the most specific one for that text);
 * - attributes: those the monitor name captured, overridden by the labels that are attributes of the
 *   playbook (labelAttributes);
 * - time: `startsAt` (UTC), else `now`.
 * An alert that matches no monitor name, or lacks a required attribute, starts nothing: the result says
 * which, in words fit for the webhook's answer.
 */
export function resolveAlert(
  alert: Pick<AlertmanagerAlert, "labels" | "annotations" | "startsAt">,
  org: Pick<ResolveExecutionOrganization, "matcher" | "playbooks">,
  now: Date,
): ResolveAlertResult {
  const titles = alertTitles(alert);
  const found = matchAlert(titles, org);
  const playbook = found === undefined ? undefined : org.playbooks.get(found.match.bookName);
  if (found === undefined || playbook === undefined) {
    const tried = titles.map((title) => `${title.source} ${JSON.stringify(clip(title.text, 200))}`).join(", ");
    return {
      ok: false,
      reason: "no_playbook",
      message: tried === "" ? "the alert has neither an alertname label nor a summary annotation" : `no playbook's monitor name matches ${tried}`,
    };
  }
  const attributes = { ...found.match.attributes, ...labelAttributes(alert.labels, playbook).attributes };
  const missing = missingAttributes(playbook, attributes);
  if (missing.length > 0) {
    const names = missing.map((name) => JSON.stringify(name)).join(", ");
    return {
      ok: false,
      reason: "missing_attributes",
      bookName: playbook.name,
      missing,
      message: `matches playbook ${JSON.stringify(playbook.name)}, which requires ${missing.length === 1 ? "attribute" : "attributes"} ${names}: neither a label nor captured from the alert's text`,
    };
  }
  const description = alert.annotations?.description?.trim();
  const value: ResolvedAlert = {
    bookName: playbook.name,
    attributes,
    time: alertTime(alert, now),
    title: found.title.text,
    monitorName: found.match.monitorName,
  };
  if (description !== undefined && description !== "") value.details = clip(description, MAX_DETAILS_LENGTH);
  return { ok: true, value };
}

/** The issue time of an alert: its `startsAt` in UTC, or `now` when it has none (a dry-run's alert). */
export function alertTime(alert: Pick<AlertmanagerAlert, "startsAt">, now: Date): string {
  return alert.startsAt === undefined ? now.toISOString() : utcIssueTime(alert.startsAt);
}

/** At most `max` UTF-16 units, never splitting a surrogate pair; a cut text ends with an ellipsis. */
function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}…`;
}
