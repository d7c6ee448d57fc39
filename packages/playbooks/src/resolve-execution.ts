import type { PlaybookExecutionInput, ValidationIssue } from "@pes/contracts";
import { MessageLinkError, parseMessageLink, type MessageLink } from "./message-link.js";
import type { MonitorNameMatcher } from "./monitor-name-matcher.js";
import type { PlaybookDefinition } from "./playbook-definition.js";

/** What an execution runs: the playbook, the issue's attributes and the issue time. */
export interface ResolvedExecution {
  bookName: string;
  attributes: Record<string, string>;
  /** ISO 8601, UTC (`Z`). */
  time: string;
}

/** The organization's playbooks, as resolveExecution needs them. */
export interface ResolveExecutionOrganization {
  playbooks: ReadonlyMap<string, PlaybookDefinition>;
  matcher: MonitorNameMatcher;
}

export interface ResolveExecutionOptions {
  /** The time of the request: the issue time when neither `time` nor a message link gives one. */
  now: Date;
  /** Chat hosts accepted in message links besides `*.slack.com`. */
  allowedChatHosts: readonly string[];
}

export type ResolveExecutionResult = { ok: true; value: ResolvedExecution } | { ok: false; issues: ValidationIssue[] };

const CHAT_INTEGRATION_MISSING =
  "identifying the playbook from a message link needs the chat integration, which is not configured; pass bookName";

/**
 * Resolves a validated execution input against an organization's playbooks: which playbook runs, with
 * which attributes, for which time. The rules that need the organization's configuration live here; the
 * shape rules are the contract's (PlaybookExecutionInput). Issue paths are relative to the body.
 *
 * - Playbook: `bookName` when given (it must exist); else the title's best monitor-name match; else, for a
 *   message link alone, an issue: reading the message needs the chat integration.
 * - Attributes: values captured by the matched monitor name, overridden by explicit `attributes`. With
 *   both `bookName` and `title`, the title still contributes captures when it matches one of that
 *   playbook's own monitor names; otherwise it is context only.
 * - Time: explicit `time` (normalised to UTC), else the message's time, else `now`.
 * - Every required attribute of the playbook must have a non-blank value: one issue per missing name.
 */
export function resolveExecution(
  input: PlaybookExecutionInput,
  org: ResolveExecutionOrganization,
  options: ResolveExecutionOptions,
): ResolveExecutionResult {
  const issues: ValidationIssue[] = [];

  let link: MessageLink | undefined;
  if (input.messageLink !== undefined) {
    try {
      link = parseMessageLink(input.messageLink, options.allowedChatHosts, options.now);
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
  } else if (link !== undefined) {
    issues.push({ path: ["messageLink"], message: CHAT_INTEGRATION_MISSING });
  } else if (input.messageLink === undefined) {
    issues.push({ path: ["bookName"], message: "One of bookName, messageLink or title is required to identify the playbook" });
  }

  const time = resolveTime(input.time, link, options.now);
  if (time === undefined) issues.push({ path: ["time"], message: "time is not a valid date-time" });

  const attributes = { ...captured, ...input.attributes };
  const playbook = bookName === undefined ? undefined : org.playbooks.get(bookName);
  for (const name of playbook?.requiredAttributes ?? []) {
    // A blank value scopes nothing: it counts as missing.
    if (Object.hasOwn(attributes, name) && attributes[name]?.trim() !== "") continue;
    issues.push({
      path: ["attributes", name],
      message:
        input.messageLink === undefined
          ? `Required attribute ${JSON.stringify(name)} is missing: pass it in attributes`
          : `Required attribute ${JSON.stringify(name)} is missing: it cannot be read from the message link ` +
            "until the chat integration is configured; pass title and attributes instead of messageLink",
    });
  }

  if (issues.length > 0 || bookName === undefined || time === undefined) {
    return { ok: false, issues };
  }
  return { ok: true, value: { bookName, attributes, time } };
}

function resolveTime(explicit: string | undefined, link: MessageLink | undefined, now: Date): string | undefined {
  const date = explicit !== undefined ? new Date(explicit) : (link?.time ?? now);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}
