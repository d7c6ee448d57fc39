import type { IncomingHttpHeaders, ServerResponse } from "node:http";
import { createChangeSignal } from "./change-signal.js";
import { startTestHttpServer } from "./test-http-server.js";

/** A request as an incident tool's fake saw it, its JSON body parsed. */
export interface IncidentToolRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body; the text when it is no JSON; undefined when empty. */
  body: unknown;
}

/** What the next note add does instead of succeeding. */
export type IncidentToolBehaviour =
  /** This HTTP status with this JSON body (default: an error message), adding nothing. */
  | { httpStatus: number; body?: object }
  /** 429 with this Retry-After (seconds), adding nothing. */
  | { retryAfterSeconds: number }
  /** Adds the note, then drops the connection before answering. */
  | { dropAfterHandling: true }
  /** Adds the note, then never answers (as when the answer is lost and the caller dies waiting). */
  | { holdAfterHandling: true };

/** An incident tool's notes API on 127.0.0.1: its requests, the notes it holds, and scripted failures of note adds. */
export interface FakeIncidentTool {
  /** The API's base URL: `http://127.0.0.1:<port>`. */
  url: string;
  /** Every request, in order. */
  requests: IncidentToolRequest[];
  /** The notes of a PagerDuty incident, or of an Opsgenie alert by its id, oldest first. */
  notes(incident: string): string[];
  /** Resolves once the incident (or alert) holds `count` notes. */
  waitForNotes(incident: string, count: number): Promise<void>;
  /** The next note add behaves as told (queued, first in first out). */
  failNextAdd(behaviour: IncidentToolBehaviour): void;
  close(): Promise<void>;
}

type Respond = (status: number, body: object) => void;

/**
 * PagerDuty's REST API v2 for incident notes, as its reference documents it: `Authorization: Token
 * token=<key>`, `Accept: application/vnd.pagerduty+json;version=2`, a `From` user email;
 * `POST /incidents/{id}/notes` `{"note":{"content"}}` → 201 `{note:{id,content,created_at,user}}`;
 * `GET` → `{notes:[…]}`; errors `{error:{message,code,errors}}` (401 code 2006, 404 code 2100).
 */
export async function startFakePagerDuty(options: { token: string; incidents: readonly string[] }): Promise<FakeIncidentTool> {
  const notes = new Map<string, { id: string; content: string; created_at: string }[]>();
  let counter = 0;
  return startFakeTool(
    (request, respond) => {
      const match = /^\/incidents\/([^/]+)\/notes$/.exec(request.path);
      if (request.headers.authorization !== `Token token=${options.token}`) return respond(401, { error: { message: "Unauthorized", code: 2006 } });
      if (request.headers.accept !== "application/vnd.pagerduty+json;version=2") return respond(406, { error: { message: "Not Acceptable", code: 2000 } });
      const incident = match?.[1] === undefined ? undefined : decodeURIComponent(match[1]);
      if (incident === undefined || !options.incidents.includes(incident)) return respond(404, { error: { message: "Incident Not Found", code: 2100 } });
      if (request.method === "GET") return respond(200, { notes: notes.get(incident) ?? [] });
      if (typeof request.headers.from !== "string" || !request.headers.from.includes("@")) {
        return respond(400, { error: { message: "Invalid Input Provided", code: 2001, errors: ["Requester User Not Found"] } });
      }
      const content = stringAt(request.body, "note", "content");
      if (content === undefined || content === "")
        return respond(400, { error: { message: "Invalid Input Provided", code: 2001, errors: ["Note content is required"] } });
      counter += 1;
      const note = { id: `PNOTE${counter}`, content, created_at: new Date().toISOString() };
      notes.set(incident, [...(notes.get(incident) ?? []), note]);
      respond(201, { note: { ...note, user: { id: "PUSER1", type: "user_reference" } } });
    },
    (incident) => (notes.get(incident) ?? []).map((note) => note.content),
  );
}

/**
 * Opsgenie's Alert API for notes: `Authorization: GenieKey <key>`; `POST /v2/alerts/{identifier}/notes
 * ?identifierType=id|alias|tiny` `{note, user?, source?}` (note ≤ 25,000 characters) → 202
 * `{result:"Request will be processed", took, requestId}`; `GET` → `{data:[{note,owner,createdAt,offset}]}`
 * (`order=desc` newest first); errors `{message, took, requestId}`.
 */
export async function startFakeOpsgenie(options: { apiKey: string; alerts: readonly { id: string; alias?: string }[] }): Promise<FakeIncidentTool> {
  const notes = new Map<string, { note: string; owner: string; createdAt: string; offset: string }[]>();
  let counter = 0;
  return startFakeTool(
    (request, respond) => {
      const match = /^\/v2\/alerts\/([^/]+)\/notes$/.exec(request.path);
      if (request.headers.authorization !== `GenieKey ${options.apiKey}`) {
        return respond(401, { message: "Could not authenticate", took: 0.001, requestId: "req-unauthorized" });
      }
      const identifier = match?.[1] === undefined ? undefined : decodeURIComponent(match[1]);
      const type = request.query.identifierType ?? "id";
      const alert = options.alerts.find((candidate) => (type === "alias" ? candidate.alias === identifier : candidate.id === identifier));
      if (alert === undefined) return respond(404, { message: "Alert does not exist", took: 0.001, requestId: "req-missing" });
      if (request.method === "GET") {
        const list = [...(notes.get(alert.id) ?? [])];
        return respond(200, { data: request.query.order === "desc" ? list.reverse() : list, paging: {}, took: 0.01, requestId: "req-list" });
      }
      const note = stringAt(request.body, "note");
      if (note === undefined || note === "" || note.length > 25_000)
        return respond(422, { message: "Request body is not processable", took: 0.001, requestId: "req-invalid" });
      counter += 1;
      notes.set(alert.id, [...(notes.get(alert.id) ?? []), { note, owner: "pes", createdAt: new Date().toISOString(), offset: String(counter) }]);
      respond(202, { result: "Request will be processed", took: 0.01, requestId: `req-${counter}` });
    },
    (incident) => (notes.get(incident) ?? []).map((note) => note.note),
  );
}

async function startFakeTool(
  handle: (request: IncidentToolRequest, respond: Respond) => void,
  notesOf: (incident: string) => string[],
): Promise<FakeIncidentTool> {
  const requests: IncidentToolRequest[] = [];
  const scripted: IncidentToolBehaviour[] = [];
  const added = createChangeSignal();
  const server = await startTestHttpServer((seen, response) => {
    const url = new URL(seen.url, "http://fake");
    const request: IncidentToolRequest = {
      method: seen.method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: seen.headers,
      body: parseBody(seen.body),
    };
    requests.push(request);
    const answer = (status: number, body: object) => send(response, status, body);
    const behaviour = request.method === "POST" ? scripted.shift() : undefined;
    if (behaviour !== undefined && "httpStatus" in behaviour) return answer(behaviour.httpStatus, behaviour.body ?? { message: "Internal Server Error" });
    if (behaviour !== undefined && "retryAfterSeconds" in behaviour) {
      return send(response, 429, { message: "Rate limit exceeded" }, { "retry-after": String(behaviour.retryAfterSeconds) });
    }
    // Handled, and the answer dropped or never sent: the caller cannot know.
    const respond: Respond = behaviour === undefined ? answer : "dropAfterHandling" in behaviour ? () => response.destroy() : () => {};
    handle(request, respond);
    added.changed();
  });
  return {
    url: server.url,
    requests,
    notes: notesOf,
    waitForNotes: (incident, count) => added.until(() => notesOf(incident).length >= count),
    failNextAdd: (behaviour) => void scripted.push(behaviour),
    close: () => server.close(),
  };
}

function parseBody(text: string): unknown {
  if (text === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The string at `path` in a parsed JSON body, if there is one. */
function stringAt(body: unknown, ...path: string[]): string | undefined {
  let current = body;
  for (const key of path) {
    if (typeof current !== "object" || current === null || !(key in current)) return undefined;
    current = Object.entries(current).find(([name]) => name === key)?.[1];
  }
  return typeof current === "string" ? current : undefined;
}

function send(response: ServerResponse, status: number, body: object, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers });
  response.end(text);
}
