import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";

/** What the next note request does instead of succeeding. */
export type Behaviour =
  | { httpStatus: number; body?: object }
  | { retryAfterSeconds: number }
  /** Adds the note, then drops the connection before answering. */
  | { dropAfterHandling: true };

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

/** A fake incident tool: its requests, the notes it holds per incident, and scripted failures of note adds. */
export interface FakeIncidentTool {
  url: string;
  requests: RecordedRequest[];
  notes(incident: string): string[];
  failNextAdd(behaviour: Behaviour): void;
  close(): Promise<void>;
}

/**
 * PagerDuty's REST API v2 for incident notes, as its reference documents it: `Authorization: Token
 * token=<key>`, `Accept: application/vnd.pagerduty+json;version=2`, a `From` user email;
 * `POST /incidents/{id}/notes` `{"note":{"content"}}` → 201 `{note:{id,content,created_at,user}}`;
 * `GET` → `{notes:[…]}`; errors `{error:{message,code,errors}}` (401 code 2006, 404 code 2100).
 */
export async function startFakePagerDuty(options: { token: string; incidents: readonly string[] }): Promise<FakeIncidentTool> {
  const notes = new Map<string, { id: string; content: string; created_at: string }[]>();
  let counter = 0;
  return startFake((request, respond) => {
    const match = /^\/incidents\/([^/]+)\/notes$/.exec(request.path);
    if (request.headers.authorization !== `Token token=${options.token}`) {
      return respond(401, { error: { message: "Unauthorized", code: 2006 } });
    }
    if (request.headers.accept !== "application/vnd.pagerduty+json;version=2") {
      return respond(406, { error: { message: "Not Acceptable", code: 2000 } });
    }
    const incident = match?.[1] === undefined ? undefined : decodeURIComponent(match[1]);
    if (incident === undefined || !options.incidents.includes(incident)) return respond(404, { error: { message: "Incident Not Found", code: 2100 } });
    if (request.method === "GET") return respond(200, { notes: notes.get(incident) ?? [] });
    if (typeof request.headers.from !== "string" || !request.headers.from.includes("@")) {
      return respond(400, { error: { message: "Invalid Input Provided", code: 2001, errors: ["Requester User Not Found"] } });
    }
    const content = contentOf(request.body, "note", "content");
    if (content === undefined || content === "") return respond(400, { error: { message: "Invalid Input Provided", code: 2001, errors: ["Note content is required"] } });
    counter += 1;
    const note = { id: `PNOTE${counter}`, content, created_at: new Date().toISOString() };
    notes.set(incident, [...(notes.get(incident) ?? []), note]);
    return respond(201, { note: { ...note, user: { id: "PUSER1", type: "user_reference" } } });
  }, (incident) => (notes.get(incident) ?? []).map((note) => note.content));
}

/**
 * Opsgenie's Alert API for notes: `Authorization: GenieKey <key>`; `POST /v2/alerts/{identifier}/notes
 * ?identifierType=id|alias|tiny` `{note, user?, source?}` (note ≤ 25,000 characters) → 202
 * `{result:"Request will be processed", took, requestId}`; `GET` → `{data:[{note,owner,createdAt,offset}]}`;
 * errors `{message, took, requestId}`.
 */
export async function startFakeOpsgenie(options: { apiKey: string; alerts: readonly { id: string; alias?: string }[] }): Promise<FakeIncidentTool> {
  const notes = new Map<string, { note: string; owner: string; createdAt: string; offset: string }[]>();
  let counter = 0;
  return startFake((request, respond) => {
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
    const note = contentOf(request.body, "note");
    if (note === undefined || note === "" || note.length > 25_000) return respond(422, { message: "Request body is not processable", took: 0.001, requestId: "req-invalid" });
    counter += 1;
    notes.set(alert.id, [...(notes.get(alert.id) ?? []), { note, owner: "pes", createdAt: new Date().toISOString(), offset: String(counter) }]);
    return respond(202, { result: "Request will be processed", took: 0.01, requestId: `req-${counter}` });
  }, (incident) => (notes.get(incident) ?? []).map((note) => note.note));
}

type Handler = (request: RecordedRequest, respond: (status: number, body: object) => void) => void;

async function startFake(handler: Handler, notesOf: (incident: string) => string[]): Promise<FakeIncidentTool> {
  const requests: RecordedRequest[] = [];
  const scripted: Behaviour[] = [];
  const server: Server = createServer((incoming: IncomingMessage, response: ServerResponse) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of incoming) chunks.push(Buffer.from(chunk));
      const url = new URL(incoming.url ?? "/", "http://fake");
      const text = Buffer.concat(chunks).toString("utf8");
      const request: RecordedRequest = {
        method: incoming.method ?? "GET",
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: incoming.headers,
        body: text === "" ? undefined : (JSON.parse(text) as unknown),
      };
      requests.push(request);
      const respond = (status: number, body: object, headers: Record<string, string> = {}) => {
        response.writeHead(status, { "content-type": "application/json", ...headers });
        response.end(JSON.stringify(body));
      };
      const behaviour = request.method === "POST" ? scripted.shift() : undefined;
      if (behaviour !== undefined && "httpStatus" in behaviour) return respond(behaviour.httpStatus, behaviour.body ?? { message: "Internal Server Error" });
      if (behaviour !== undefined && "retryAfterSeconds" in behaviour) {
        return respond(429, { message: "Rate limit exceeded" }, { "retry-after": String(behaviour.retryAfterSeconds) });
      }
      if (behaviour !== undefined && "dropAfterHandling" in behaviour) return handler(request, () => response.destroy());
      return handler(request, respond);
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the fake has no TCP address");
  return {
    url: `http://127.0.0.1:${address.port}`,
    requests,
    notes: notesOf,
    failNextAdd: (behaviour) => void scripted.push(behaviour),
    close: () =>
      new Promise<void>((resolve, reject) => {
        if (!server.listening) return resolve();
        server.closeAllConnections();
        server.close((error) => (error === undefined ? resolve() : reject(error)));
      }),
  };
}

function contentOf(body: unknown, ...path: string[]): string | undefined {
  let current = body;
  for (const key of path) {
    if (typeof current !== "object" || current === null || !(key in current)) return undefined;
    current = Object.entries(current).find(([name]) => name === key)?.[1];
  }
  return typeof current === "string" ? current : undefined;
}
