import { MAX_ATTRIBUTES, MAX_ATTRIBUTES_BYTES } from "@pes/contracts";
import type { AlertSource, ParsedAlertMessage } from "./alert-parsers/alert-parser.js";
import { INCIDENT_ATTRIBUTES } from "../incident-tools/incident-reference.js";
import { findIncidentRefs, type IncidentRef } from "./incident-refs.js";
import { parseAlertMessage } from "./parse-alert-message.js";
import { slackTsToDate, type SlackMessage } from "./slack-message.js";

/** What an execution takes from an alert message. */
export interface MessageIssue {
  source: AlertSource;
  /** The alert's title (at most 1024 characters, as the API's `title`). */
  title: string;
  /**
   * The names to try against the playbooks' monitor names, in order, `title` first (each at most 1024
   * characters): without bookName, the first that matches identifies the playbook.
   */
  titleCandidates: string[];
  /**
   * The alert's labels that can be attributes, and the incident its links name (`pagerduty_incident_id`,
   * `opsgenie_alert_id`) unless a label names one, within the API's attribute caps.
   */
  attributes: Record<string, string>;
  /**
   * The tool's labelled values (fields) that can be attributes, within what the caps leave: a playbook
   * takes one only for an attribute it declares that nothing else gave (resolveMessageExecution).
   */
  fields: Record<string, string>;
  /** The message as plain text (at most 16 KiB characters, as the API's `details`). */
  details: string;
  /** The issue time, ISO 8601 UTC: when the alert started if the message says so, else the message's time. */
  time: string;
  timeSource: "alert" | "message";
  /** The incidents the message refers to, for adding a note (liveRun). */
  incidentRefs: IncidentRef[];
}

/** As the API's `title` and `details` (packages/contracts execution-input.ts). */
const MAX_TITLE_LENGTH = 1024;
const MAX_DETAILS_LENGTH = 16_384;
/** As the API's attribute record: names of at most 128 characters, values of at most 1024. */
const MAX_NAME_LENGTH = 128;
const MAX_VALUE_LENGTH = 1024;
/** A label name as Prometheus defines it: the only names that become attributes. */
const SIMPLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** No alert starts before Slack existed; a start after the message (beyond clock skew) is not its start. */
const EARLIEST_START = Date.UTC(2013, 0, 1);
const MAX_CLOCK_SKEW_MS = 5 * 60 * 1000;

/** Reads a fetched Slack message into what an execution needs (parseAlertMessage, then issueFromAlertMessage). */
export function issueFromSlackMessage(message: SlackMessage): MessageIssue {
  const messageTime = slackTsToDate(message.ts);
  // fetchSlackMessage returns only a message whose ts equals the link's, which parseMessageLink checked.
  if (messageTime === undefined) throw new Error(`message ts ${JSON.stringify(message.ts)} is not a Slack timestamp`);
  return issueFromAlertMessage(parseAlertMessage(message), messageTime);
}

/**
 * What an execution needs from a parsed alert message:
 * - attributes: the incident ids its links name (where no label of that name exists), then the labels,
 *   in the message's order; fields: the fields likewise, after them. Each only with a simple label name
 *   (`^[A-Za-z_][A-Za-z0-9_]*$`, not the reserved `__` prefix, at most 128 characters) and a non-blank
 *   value of at most 1024 characters, all within the API's caps together: MAX_ATTRIBUTES entries and
 *   MAX_ATTRIBUTES_BYTES of names and values (UTF-8); one that does not fit is left out;
 * - time: the alert's start when the message states one that is plausible (after 2013, not after the
 *   message), else `messageTime`;
 * - incidentRefs: PagerDuty and Opsgenie references in the links and labels (findIncidentRefs).
 */
export function issueFromAlertMessage(parsed: ParsedAlertMessage, messageTime: Date): MessageIssue {
  const incidentRefs = findIncidentRefs(parsed.links, parsed.labels);
  const linked: [string, string][] = [];
  for (const ref of incidentRefs) {
    if (!("url" in ref)) continue;
    const [name, value] = ref.tool === "pagerduty" ? [INCIDENT_ATTRIBUTES.pagerduty, ref.incidentId] : [INCIDENT_ATTRIBUTES.opsgenieId, ref.alertId];
    if (!Object.hasOwn(parsed.labels, name) && !linked.some(([known]) => known === name)) linked.push([name, value]);
  }

  let count = 0;
  let bytes = 0;
  const usable = (pairs: Iterable<[string, string]>): Record<string, string> => {
    const kept = new Map<string, string>();
    for (const [name, rawValue] of pairs) {
      const value = rawValue.trim();
      if (count >= MAX_ATTRIBUTES) break;
      if (!SIMPLE_NAME.test(name) || name.startsWith("__") || name.length > MAX_NAME_LENGTH) continue;
      if (value === "" || value.length > MAX_VALUE_LENGTH || kept.has(name)) continue;
      const size = Buffer.byteLength(name) + Buffer.byteLength(value);
      if (bytes + size > MAX_ATTRIBUTES_BYTES) continue;
      kept.set(name, value);
      count += 1;
      bytes += size;
    }
    return Object.fromEntries(kept);
  };
  const attributes = usable([...linked, ...Object.entries(parsed.labels)]);
  const fields = usable(Object.entries(parsed.fields));

  const start = parsed.startsAt?.getTime();
  const fromAlert = start !== undefined && start >= EARLIEST_START && start <= messageTime.getTime() + MAX_CLOCK_SKEW_MS;
  return {
    source: parsed.source,
    title: truncate(parsed.title, MAX_TITLE_LENGTH),
    titleCandidates: [...new Set(parsed.titleCandidates.map((title) => truncate(title, MAX_TITLE_LENGTH)))],
    attributes,
    fields,
    details: truncate(parsed.details, MAX_DETAILS_LENGTH),
    time: new Date(fromAlert ? start : messageTime.getTime()).toISOString(),
    timeSource: fromAlert ? "alert" : "message",
    incidentRefs,
  };
}

/** At most `max` UTF-16 units, never splitting a surrogate pair; a cut text ends with an ellipsis. */
function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}…`;
}
