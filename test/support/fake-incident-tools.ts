import { EventEmitter } from "node:events";
import { sendJson, startTestHttpServer, type SeenRequest } from "@pes/local-services";

/** An incident tool's notes API on 127.0.0.1: the notes it holds, and what the next add does instead. */
export interface FakeIncidentTool {
  url: string;
  requests: SeenRequest[];
  /** The notes of an incident (PagerDuty) or alert (Opsgenie, by its identifier), oldest first. */
  notes(incident: string): string[];
  /** Resolves once `count` notes were added in total. */
  waitForNotes(count: number): Promise<void>;
  /** The next note add answers this HTTP status instead, adding nothing. */
  failNextAdd(status: number): void;
  /** The next note add is stored, then never answered (as when the answer is lost). */
  holdNextAddAfterStoring(): void;
  close(): Promise<void>;
}

type NoteStore = { notes: Map<string, string[]>; added: EventEmitter; next: "fail" | "hold" | undefined; failStatus: number };

/**
 * PagerDuty's REST API for incident notes (developer.pagerduty.com, "Create a note on an incident"):
 * `POST /incidents/{id}/notes` with `Authorization: Token token=<key>`, the versioned `Accept`, a `From`
 * email and `{"note":{"content"}}` → 201 `{note:{id,content}}`; `GET` → `{notes:[{id,content}]}`.
 */
export function startFakePagerDuty(options: { token: string; incidents: readonly string[] }): Promise<FakeIncidentTool> {
  return startFakeTool((request, store) => {
    const incident = /^\/incidents\/([^/?]+)\/notes/.exec(request.url)?.[1];
    if (request.headers.authorization !== `Token token=${options.token}`) return { status: 401, body: { error: { message: "Unauthorized", code: 2006 } } };
    if (incident === undefined || !options.incidents.includes(decodeURIComponent(incident))) {
      return { status: 404, body: { error: { message: "Incident Not Found", code: 2100 } } };
    }
    const id = decodeURIComponent(incident);
    if (request.method === "GET") return { status: 200, body: { notes: (store.notes.get(id) ?? []).map((content, index) => ({ id: `N${index}`, content })) } };
    if (typeof request.headers.from !== "string" || !request.headers.from.includes("@")) {
      return { status: 400, body: { error: { message: "Invalid Input Provided", errors: ["Requester User Not Found"] } } };
    }
    const content = (JSON.parse(request.body) as { note?: { content?: string } }).note?.content ?? "";
    return { add: { incident: id, content }, status: 201, body: { note: { id: `N${store.notes.get(id)?.length ?? 0}`, content } } };
  });
}

/**
 * Opsgenie's Alert API for notes (docs.opsgenie.com, "Add note to alert"): `POST /v2/alerts/{identifier}/notes
 * ?identifierType=id|alias` with `Authorization: GenieKey <key>` and `{note, source}` → 202
 * `{result, took, requestId}`; `GET` the same path → `{data:[{note, offset}]}`.
 */
export function startFakeOpsgenie(options: { apiKey: string }): Promise<FakeIncidentTool> {
  return startFakeTool((request, store) => {
    const url = new URL(request.url, "http://fake");
    const identifier = /^\/v2\/alerts\/([^/]+)\/notes$/.exec(url.pathname)?.[1];
    if (request.headers.authorization !== `GenieKey ${options.apiKey}`) return { status: 401, body: { message: "Could not authenticate" } };
    if (identifier === undefined) return { status: 404, body: { message: "Not found" } };
    const key = `${url.searchParams.get("identifierType") ?? "id"}:${decodeURIComponent(identifier)}`;
    if (request.method === "GET") {
      return { status: 200, body: { data: (store.notes.get(key) ?? []).map((note, offset) => ({ note, offset: String(offset) })) } };
    }
    const content = (JSON.parse(request.body) as { note?: string }).note ?? "";
    return { add: { incident: key, content }, status: 202, body: { result: "Request will be processed", took: 0.1, requestId: `r-${Date.now()}` } };
  });
}

async function startFakeTool(
  route: (request: SeenRequest, store: NoteStore) => { status: number; body: object; add?: { incident: string; content: string } },
): Promise<FakeIncidentTool> {
  const store: NoteStore = { notes: new Map(), added: new EventEmitter(), next: undefined, failStatus: 500 };
  let total = 0;
  const server = await startTestHttpServer((request, response) => {
    const answer = route(request, store);
    if (answer.add !== undefined) {
      const next = store.next;
      store.next = undefined;
      if (next === "fail") return sendJson(response, store.failStatus, { error: { message: "Internal Server Error" } });
      const { incident, content } = answer.add;
      store.notes.set(incident, [...(store.notes.get(incident) ?? []), content]);
      total += 1;
      store.added.emit("note");
      // Stored, and the answer never sent: the caller cannot know.
      if (next === "hold") return;
    }
    sendJson(response, answer.status, answer.body);
  });
  return {
    url: server.url,
    requests: server.requests,
    notes: (incident) => store.notes.get(incident) ?? [],
    waitForNotes: (count) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (total < count) return;
          store.added.off("note", check);
          resolve();
        };
        store.added.on("note", check);
        check();
      }),
    failNextAdd(status) {
      store.next = "fail";
      store.failStatus = status;
    },
    holdNextAddAfterStoring() {
      store.next = "hold";
    },
    close: () => server.close(),
  };
}
