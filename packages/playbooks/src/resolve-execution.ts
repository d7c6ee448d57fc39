import { issueTime, looksLikeTeamsChannelId, parseTeamsChannelId, utcIssueTime, type PlaybookExecutionInput, type ValidationIssue } from "@pes/contracts";
import { MessageLinkError, parseMessageLink, type MessageLink } from "./message-link.js";
import { monitorNamePlaceholders, type MonitorNameMatcher } from "./monitor-name-matcher.js";
import type { PlaybookDefinition } from "./playbook-definition.js";

/** What an execution runs: the playbook, the issue's attributes and the issue time. */
export interface ResolvedExecution {
  bookName: string;
  attributes: Record<string, string>;
  /** ISO 8601, UTC (`Z`). */
  time: string;
}

/**
 * An execution whose issue is a chat message: the link checked, `bookName` (if given) known. The worker
 * reads the message and resolves the rest (resolveMessageExecution).
 */
export interface LinkedExecution {
  messageLink: string;
  link: MessageLink;
  bookName?: string;
}

/** The organization's playbooks and integrations, as resolveExecution needs them. */
export interface ResolveExecutionOrganization {
  playbooks: ReadonlyMap<string, PlaybookDefinition>;
  matcher: MonitorNameMatcher;
  /** Its Slack app, when configured: message links and channel posts need it. */
  slack?: { allowedHosts: readonly string[] };
  /** Its Microsoft Teams account, when configured: posts to Teams channels need it. */
  teams?: object;
  /** Its incident tools, when configured: `liveRun: true` needs one. */
  incidentTools?: object;
}

export interface ResolveExecutionOptions {
  /** The time of the request: the issue time when neither `time` nor a message link gives one. */
  now: Date;
  /** Chat hosts accepted in message links besides `*.slack.com` and the organization's own. */
  allowedChatHosts: readonly string[];
}

export type ResolveExecutionResult = { ok: true; value: ResolvedExecution } | { ok: true; linked: LinkedExecution } | { ok: false; issues: ValidationIssue[] };

/** A message's time becomes the job's: held to the rule the worker reads a job's time with. */
const MessageTime = issueTime("time");

const SLACK_MISSING = "the organization has no Slack app configured (slack.botToken in its organization file)";
const TEAMS_MISSING = "the organization has no Microsoft Teams account configured (teams: in its organization file)";
const INCIDENT_TOOL_MISSING = "the organization has no incident tool configured (incidentTools.pagerduty or incidentTools.opsgenie in its organization file)";

/**
 * Resolves a validated execution input against an organization's playbooks and integrations: which
 * playbook runs, with which attributes, for which time. The rules that need the organization's
 * configuration live here; the shape rules are the contract's (PlaybookExecutionInput). Issue paths are
 * relative to the body.
 *
 * - Integrations: `messageLink` and `channelId` need the organization's Slack app, `liveRun: true` one of
 *   its incident tools; without, a 400 naming what is missing (asked-for side effects never silently
 *   happen nowhere).
 * - A message link (https, `*.slack.com` or an allowed host): `linked`, with `bookName` checked when
 *   given. The worker reads the message; the playbook, attributes and time come from it there.
 * - Otherwise the playbook is `bookName` when given (it must exist), else the title's best monitor-name
 *   match. Attributes: values captured by the matched monitor name, overridden by explicit `attributes`.
 *   With both `bookName` and `title`, the title still contributes captures when it matches one of that
 *   playbook's own monitor names; otherwise it is context only.
 * - Time: explicit `time` (normalised to UTC), else `now`.
 * - Every required attribute of the playbook must have a non-blank value: one issue per missing name.
 */
export function resolveExecution(input: PlaybookExecutionInput, org: ResolveExecutionOrganization, options: ResolveExecutionOptions): ResolveExecutionResult {
  const issues: ValidationIssue[] = integrationIssues(input, org);
  let link: MessageLink | undefined;
  if (input.messageLink !== undefined && org.slack !== undefined) {
    try {
      link = parseMessageLink(input.messageLink, [...options.allowedChatHosts, ...org.slack.allowedHosts], options.now);
    } catch (error) {
      if (!(error instanceof MessageLinkError)) throw error;
      issues.push({ path: ["messageLink"], message: error.message });
    }
  }

  let bookName: string | undefined;
  let captured: Record<string, string> = {};
  if (input.bookName !== undefined) {
    if (org.playbooks.has(input.bookName)) {
      bookName = input.bookName;
      if (input.title !== undefined) {
        captured = org.matcher.match(input.title, { bookName })?.attributes ?? {};
      }
    } else {
      issues.push({ path: ["bookName"], message: `Unknown playbook ${JSON.stringify(input.bookName)} for this organization` });
    }
  } else if (input.title !== undefined) {
    const match = org.matcher.match(input.title);
    if (match === undefined) {
      issues.push({ path: ["title"], message: "No playbook's monitor name matches this title" });
    } else {
      bookName = match.bookName;
      captured = match.attributes;
    }
  } else if (input.messageLink === undefined) {
    issues.push({ path: ["bookName"], message: "One of bookName, messageLink or title is required to identify the playbook" });
  }

  if (input.messageLink !== undefined) {
    if (issues.length > 0 || link === undefined) return { ok: false, issues };
    return { ok: true, linked: { messageLink: input.messageLink, link, ...(bookName === undefined ? {} : { bookName }) } };
  }

  const time = input.time === undefined ? options.now.toISOString() : utcIssueTime(input.time);

  const attributes = { ...captured, ...input.attributes };
  const playbook = bookName === undefined ? undefined : org.playbooks.get(bookName);
  for (const name of missingAttributes(playbook, attributes)) {
    issues.push({ path: ["attributes", name], message: `Required attribute ${JSON.stringify(name)} is missing: pass it in attributes` });
  }

  if (issues.length > 0 || bookName === undefined) {
    return { ok: false, issues };
  }
  return { ok: true, value: { bookName, attributes, time } };
}

/**
 * The issues of fields that ask for an integration the organization does not configure: `channelId`
 * needs its Slack app, or its Teams account for a Teams channel (`<team-id>/<channel-id>`); `messageLink`
 * its Slack app; `liveRun: true` an incident tool. Also for a batch's envelope.
 */
export function integrationIssues(
  fields: { channelId?: string | undefined; liveRun?: boolean | undefined; messageLink?: string | undefined },
  org: Pick<ResolveExecutionOrganization, "slack" | "teams" | "incidentTools">,
): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  if (fields.channelId !== undefined) {
    const issue = channelIdIssue(fields.channelId, org);
    if (issue !== undefined) issues.push({ path: ["channelId"], message: issue });
  }
  if (fields.liveRun === true && org.incidentTools === undefined) {
    issues.push({ path: ["liveRun"], message: `liveRun needs an incident tool: ${INCIDENT_TOOL_MISSING}` });
  }
  if (fields.messageLink !== undefined && org.slack === undefined) {
    issues.push({ path: ["messageLink"], message: `messageLink needs Slack to read the message: ${SLACK_MISSING}` });
  }
  return issues;
}

function channelIdIssue(channelId: string, org: Pick<ResolveExecutionOrganization, "slack" | "teams">): string | undefined {
  if (parseTeamsChannelId(channelId) !== undefined) return org.teams === undefined ? `channelId names a Microsoft Teams channel: ${TEAMS_MISSING}` : undefined;
  if (looksLikeTeamsChannelId(channelId)) {
    return "channelId looks like a Microsoft Teams channel but is not <team-id>/<channel-id> (the team's GUID, then the channel's 19:…@thread.tacv2 id)";
  }
  if (org.slack !== undefined) return undefined;
  return org.teams === undefined
    ? `channelId needs Slack: ${SLACK_MISSING}`
    : `channelId needs Slack: ${SLACK_MISSING}; a Microsoft Teams channel is written <team-id>/<channel-id>`;
}

/** What resolveMessageExecution reads from a chat message (`@pes/integrations`' MessageIssue). */
export interface MessageIssueInput {
  /** Names to try against the monitor names, in order: the first that matches identifies the playbook. */
  titleCandidates: readonly string[];
  /** The message's labels that can be attributes (and the incident it links to). */
  attributes: Readonly<Record<string, string>>;
  /** The tool's labelled values (PagerDuty's Service, Urgency…): only fill in a declared attribute. */
  fields?: Readonly<Record<string, string>>;
  /** The issue time, ISO 8601. */
  time: string;
}

/**
 * Resolves an execution whose issue is a chat message, once the worker has read it, with the same rules
 * as resolveExecution: `bookName` when given (it must exist; a title candidate that matches one of its
 * own monitor names contributes captures), else the first title candidate that matches a monitor name.
 * Attributes: the captures, overridden by the message's labels; then a field (the tool's labelled
 * values) for each attribute the playbook declares (attributeNamesOf) that is still without a non-blank
 * value: a field says what the tool calls things (PagerDuty's Service is a PagerDuty service), so it
 * never overrides what the title or the alert's labels say. Time: the message's. A message that
 * matches no playbook or lacks a required attribute is an issue on `messageLink`, saying which.
 */
export function resolveMessageExecution(
  message: MessageIssueInput,
  bookName: string | undefined,
  org: Pick<ResolveExecutionOrganization, "playbooks" | "matcher">,
): { ok: true; value: ResolvedExecution } | { ok: false; issues: ValidationIssue[] } {
  let chosen: string | undefined;
  let captured: Record<string, string> = {};
  if (bookName !== undefined) {
    if (!org.playbooks.has(bookName)) {
      return { ok: false, issues: [{ path: ["bookName"], message: `Unknown playbook ${JSON.stringify(bookName)} for this organization` }] };
    }
    chosen = bookName;
    captured = firstMatch(message.titleCandidates, (title) => org.matcher.match(title, { bookName }))?.attributes ?? {};
  } else {
    const match = firstMatch(message.titleCandidates, (title) => org.matcher.match(title));
    if (match === undefined) {
      const [title] = message.titleCandidates;
      const reason =
        title === undefined
          ? "the linked message has no title to match against the playbooks' monitor names; pass bookName"
          : `No playbook's monitor name matches the linked message's title ${JSON.stringify(clip(title))}; pass bookName`;
      return { ok: false, issues: [{ path: ["messageLink"], message: reason }] };
    }
    chosen = match.bookName;
    captured = match.attributes;
  }

  if (!MessageTime.safeParse(message.time).success) {
    return { ok: false, issues: [{ path: ["messageLink"], message: "the linked message has no usable time" }] };
  }
  const attributes: Record<string, string> = { ...captured, ...message.attributes };
  const playbook = org.playbooks.get(chosen);
  if (playbook !== undefined) {
    for (const name of attributeNamesOf(playbook)) {
      const field = message.fields !== undefined && Object.hasOwn(message.fields, name) ? message.fields[name] : undefined;
      if (field !== undefined && field.trim() !== "" && !hasValue(attributes, name)) attributes[name] = field;
    }
  }
  const missing = missingAttributes(playbook, attributes);
  if (missing.length > 0) {
    const names = missing.map((name) => JSON.stringify(name)).join(", ");
    return {
      ok: false,
      issues: [
        {
          path: ["messageLink"],
          message: `Playbook ${JSON.stringify(chosen)} requires ${missing.length === 1 ? "attribute" : "attributes"} ${names}, which the linked message does not carry`,
        },
      ],
    };
  }
  return { ok: true, value: { bookName: chosen, attributes, time: utcIssueTime(message.time) } };
}

/** The attribute names a playbook knows: required, optional, and captured by its monitor names. */
export function attributeNamesOf(playbook: PlaybookDefinition): Set<string> {
  return new Set([...(playbook.requiredAttributes ?? []), ...(playbook.optionalAttributes ?? []), ...playbook.monitorNames.flatMap(monitorNamePlaceholders)]);
}

/** The playbook's required attributes without a non-blank value (a blank value scopes nothing). */
export function missingAttributes(playbook: PlaybookDefinition | undefined, attributes: Readonly<Record<string, string>>): string[] {
  return (playbook?.requiredAttributes ?? []).filter((name) => !hasValue(attributes, name));
}

function hasValue(attributes: Readonly<Record<string, string>>, name: string): boolean {
  return Object.hasOwn(attributes, name) && attributes[name]?.trim() !== "";
}

function firstMatch<T>(titles: readonly string[], match: (title: string) => T | undefined): T | undefined {
  for (const title of titles) {
    const found = match(title);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** A title as quoted in a message: at most 200 characters. */
function clip(title: string): string {
  return title.length <= 200 ? title : `${title.slice(0, 199)}…`;
}
