import { z } from "zod";
import type { AttemptOutcome } from "../delivery/once-per-key.js";
import type { CallBounds } from "../delivery/call-bounds.js";
import { attemptFailure, callTool } from "./incident-http.js";
import type { IncidentReference } from "./incident-reference.js";

export const PAGERDUTY_API_URL = "https://api.pagerduty.com";
export const OPSGENIE_API_URL = "https://api.opsgenie.com";
export const OPSGENIE_EU_API_URL = "https://api.eu.opsgenie.com";
const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;

// The parts of the tools' answers we read. An add whose answer does not parse still added the note.
const PagerDutyNoteAdded = z.object({ note: z.object({ id: z.string() }) });
const PagerDutyNotes = z.object({ notes: z.array(z.object({ id: z.string(), content: z.string() })) });
const OpsgenieAccepted = z.object({ requestId: z.string() });
const OpsgenieNotes = z.object({ data: z.array(z.object({ note: z.string(), offset: z.string().optional() })) });

/** PagerDuty's REST API, as an organization configures it (secrets already resolved from their references). */
export interface PagerDutyConfig {
  tool: "pagerduty";
  /** A REST API key (account or user token). */
  apiToken: string;
  /** The `From` header: the email of a PagerDuty user, whom the note is attributed to. */
  fromEmail: string;
  /** Default `https://api.pagerduty.com`. */
  baseUrl?: string;
  requestTimeoutMs?: number;
}

/** Opsgenie's Alert API, as an organization configures it. */
export interface OpsgenieConfig {
  tool: "opsgenie";
  /** An API integration's key. */
  apiKey: string;
  /** `https://api.opsgenie.com` (default, US region) or `https://api.eu.opsgenie.com` (EU). */
  baseUrl?: string;
  requestTimeoutMs?: number;
}

export type IncidentToolConfig = PagerDutyConfig | OpsgenieConfig;

/** Adds a note to one incident, and finds a note of ours by its mark. */
export interface NoteTarget {
  /** The tool's name in reasons. */
  readonly name: string;
  /** Adds the note; its value is the tool's id for it (PagerDuty's note id, Opsgenie's request id). */
  add(content: string, bounds: CallBounds): Promise<AttemptOutcome<string>>;
  /** A note whose content holds `mark`, among the incident's notes, or undefined. @throws when it cannot tell. */
  findMarked(mark: string, bounds: CallBounds): Promise<string | undefined>;
}

/** The incident's notes through the configured tool's API. */
export function noteTarget(config: IncidentToolConfig, reference: IncidentReference): NoteTarget {
  if (config.tool === "pagerduty" && reference.tool === "pagerduty") return pagerDutyTarget(config, reference.incidentId);
  if (config.tool === "opsgenie" && reference.tool === "opsgenie") return opsgenieTarget(config, reference.identifier, reference.identifierType);
  throw new Error(`a ${reference.tool} reference cannot be used with ${config.tool}`);
}

/**
 * PagerDuty REST API v2, incident notes (developer.pagerduty.com, "Create a note on an incident"):
 * `POST /incidents/{id}/notes` with `Authorization: Token token=…`, the versioned `Accept`, `From`, and
 * `{"note":{"content":…}}` → 201 `{note:{id,…}}`; `GET /incidents/{id}/notes` → `{notes:[{id,content}]}`.
 */
function pagerDutyTarget(config: PagerDutyConfig, incidentId: string): NoteTarget {
  const url = `${trimSlash(config.baseUrl ?? PAGERDUTY_API_URL)}/incidents/${pathSegment(incidentId)}/notes`;
  const headers = {
    authorization: `Token token=${config.apiToken}`,
    accept: "application/vnd.pagerduty+json;version=2",
    from: config.fromEmail,
  };
  const base = { tool: "PagerDuty", url, headers, secret: config.apiToken, timeoutMs: config.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS };
  return {
    name: "PagerDuty",
    async add(content, bounds) {
      try {
        const answer = await callTool({ ...base, method: "POST", body: { note: { content } } }, bounds);
        return { done: PagerDutyNoteAdded.safeParse(answer.json).data?.note.id ?? "" };
      } catch (error) {
        return attemptFailure(error);
      }
    },
    async findMarked(mark, bounds) {
      const answer = await callTool({ ...base, method: "GET" }, bounds);
      return PagerDutyNotes.parse(answer.json).notes.find((note) => note.content.includes(mark))?.id;
    },
  };
}

/**
 * Opsgenie Alert API (docs.opsgenie.com, "Add note to alert"): `POST /v2/alerts/{identifier}/notes
 * ?identifierType=id|alias|tiny` with `Authorization: GenieKey …` and `{note, source}` → 202
 * `{result, requestId}` (Opsgenie processes it asynchronously); `GET` the same path lists the notes
 * (`{data:[{note,owner,createdAt,offset}]}`), newest first with `order=desc`.
 */
function opsgenieTarget(config: OpsgenieConfig, identifier: string, identifierType: "id" | "alias"): NoteTarget {
  const path = `${trimSlash(config.baseUrl ?? OPSGENIE_API_URL)}/v2/alerts/${pathSegment(identifier)}/notes`;
  const base = {
    tool: "Opsgenie",
    headers: { authorization: `GenieKey ${config.apiKey}`, accept: "application/json" },
    secret: config.apiKey,
    timeoutMs: config.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
  };
  return {
    name: "Opsgenie",
    async add(content, bounds) {
      try {
        const query = new URLSearchParams({ identifierType });
        const answer = await callTool(
          { ...base, method: "POST", url: `${path}?${query}`, body: { note: content, source: "Playbook Execution Service" } },
          bounds,
        );
        return { done: OpsgenieAccepted.safeParse(answer.json).data?.requestId ?? "" };
      } catch (error) {
        return attemptFailure(error);
      }
    },
    async findMarked(mark, bounds) {
      const query = new URLSearchParams({ identifierType, order: "desc", limit: "100" });
      const answer = await callTool({ ...base, method: "GET", url: `${path}?${query}` }, bounds);
      const found = OpsgenieNotes.parse(answer.json).data.find((note) => note.note.includes(mark));
      // A listed note has no id of its own: its offset stands for it.
      return found === undefined ? undefined : (found.offset ?? "");
    },
  };
}

/**
 * An identifier as one path segment: percent-encoded, so that an alias such as `a/b?c` stays inside the
 * segment. (`.` and `..`, which URL parsing resolves even encoded, are refused as references.)
 */
function pathSegment(value: string): string {
  return encodeURIComponent(value);
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, "");
}
