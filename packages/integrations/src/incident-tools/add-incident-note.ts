import type { PlaybookExecutionResult } from "@pes/contracts";
import { incidentNoteKey, type KeySpace } from "@pes/jobs";
import type { Cluster, Redis } from "ioredis";
import { runOncePerKey } from "../delivery/once-per-key.js";
import type { CallBounds } from "../delivery/call-bounds.js";
import { executionMark, renderIncidentNote } from "./incident-note-text.js";
import { noteTarget, type IncidentToolConfig } from "./incident-note-targets.js";
import { describeReference, findIncidentReference, INCIDENT_ATTRIBUTES } from "./incident-reference.js";

/** What adding a note needs besides the note: the record store and the time left. */
export interface IncidentNoteContext extends CallBounds {
  /** Where each execution's note is recorded, so that a retried job never adds a second one. */
  /** One Redis or a Redis Cluster: single-key commands and scripts only. */
  redis: Redis | Cluster;
  /** Where the records are kept (incidentNoteKey). */
  keys: KeySpace;
  /** How long a record is kept: longer than a job can still be retried. Default 7 days. */
  retainMs?: number;
}

export interface IncidentNoteRequest {
  /** The execution's id: one note per execution, and the note's last line names it. */
  executionId: string;
  /** The organization's incident tool, its secrets resolved. */
  tool: IncidentToolConfig;
  /** The attributes: `pagerduty_incident_id`, `opsgenie_alert_id` or `opsgenie_alias` name the incident. */
  attributes: Readonly<Record<string, string>>;
  /** The text of the message the issue came from (links unescaped), searched for an incident link. */
  messageText?: string;
  result: PlaybookExecutionResult;
  title?: string;
  /** The Slack thread where the result was posted, when it was: the note links to it. */
  enrichmentLink?: string;
}

/**
 * `added`: the incident has the note, added by this call or an earlier try (`byThisCall` false).
 * `no_reference`: nothing names an incident of the configured tool; nothing was sent.
 * `failed`: the tool refused or could not be reached; `reason` says so, never with the key.
 */
export type IncidentNoteOutcome =
  | { status: "added"; tool: IncidentToolConfig["tool"]; incident: string; byThisCall: boolean }
  | { status: "no_reference"; reason: string }
  | { status: "failed"; tool: IncidentToolConfig["tool"]; reason: string };

const DEFAULT_RETAIN_MS = 7 * 24 * 3_600_000;
/**
 * A try is presumed dead this long after its deadline: it waits for nothing past the deadline, and its
 * request ends at its timeout (10 s by default; keep it well under this).
 */
const LEASE_AFTER_DEADLINE_MS = 60_000;

/**
 * Adds the result as a note to the incident the issue refers to, in the organization's incident tool
 * (PagerDuty incident notes or Opsgenie alert notes): exactly one note per execution, also when the job
 * is retried (record in Redis; a try that lost the tool's answer finds its note by the execution's mark
 * among the incident's notes instead of adding another).
 */
export async function addIncidentNote(context: IncidentNoteContext, request: IncidentNoteRequest): Promise<IncidentNoteOutcome> {
  const { tool } = request;
  const reference = findIncidentReference(tool.tool, {
    attributes: request.attributes,
    ...(request.messageText === undefined ? {} : { messageText: request.messageText }),
  });
  if (reference === undefined) {
    const attributes = tool.tool === "pagerduty" ? INCIDENT_ATTRIBUTES.pagerduty : `${INCIDENT_ATTRIBUTES.opsgenieId} or ${INCIDENT_ATTRIBUTES.opsgenieAlias}`;
    const name = tool.tool === "pagerduty" ? "PagerDuty incident" : "Opsgenie alert";
    return { status: "no_reference", reason: `no ${name} to add the note to: the issue has no valid ${attributes} attribute and its message no ${name} link` };
  }
  const target = noteTarget(tool, reference);
  const incident = describeReference(reference);
  const content = renderIncidentNote({
    result: request.result,
    executionId: request.executionId,
    ...(request.title === undefined ? {} : { title: request.title }),
    ...(request.enrichmentLink === undefined ? {} : { enrichmentLink: request.enrichmentLink }),
  });
  const outcome = await runOncePerKey<string>({
    redis: context.redis,
    key: incidentNoteKey(context.keys, request.executionId),
    leaseMs: Math.max(0, context.deadline - Date.now()) + LEASE_AFTER_DEADLINE_MS,
    retainMs: context.retainMs ?? DEFAULT_RETAIN_MS,
    encode: (id) => id,
    decode: (text) => text,
    perform: () => target.add(content, context),
    find: () => target.findMarked(executionMark(request.executionId), context),
  });
  if (outcome.status === "done") return { status: "added", tool: tool.tool, incident, byThisCall: outcome.byThisCall };
  return { status: "failed", tool: tool.tool, reason: `adding the note to ${incident} failed: ${outcome.reason}` };
}
