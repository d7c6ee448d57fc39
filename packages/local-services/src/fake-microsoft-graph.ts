import type { ServerResponse } from "node:http";
import { createChangeSignal } from "./change-signal.js";
import { channelBuckets, type ChannelRateLimit } from "./channel-rate-limit.js";
import { sendJson, startTestHttpServer, type SeenRequest } from "./test-http-server.js";

/**
 * Microsoft Teams on 127.0.0.1 as a service posting to channels meets it: the Microsoft identity
 * platform's token endpoint (`POST /{tenant}/oauth2/v2.0/token`, form-encoded, `grant_type=refresh_token`
 * with the app's `client_id` and `client_secret`; errors as `{error, error_description}` with AADSTS
 * codes) and Microsoft Graph v1.0's channel messages, with `Authorization: Bearer` and errors as
 * `{error: {code, message}}`:
 *
 * - `POST /v1.0/teams/{team-id}/channels/{channel-id}/messages` and `…/messages/{message-id}/replies`:
 *   a chatMessage whose HTML body places each attachment (`<attachment id="…"></attachment>`), Adaptive
 *   Cards as `application/vnd.microsoft.card.adaptive` with the card as a JSON string; answered 201 with
 *   the created chatMessage and its `webUrl`. A request over Teams' message size (28 KB) is refused 413.
 * - `GET …/messages` and `GET …/messages/{message-id}/replies`: newest first, `$top` (default 20, at
 *   most 50), `@odata.nextLink` to the next page.
 *
 * Refresh tokens rotate as Microsoft's do: each grant returns a new one, and earlier ones stay valid.
 */
export interface FakeMicrosoftGraphOptions {
  tenantId: string;
  clientId: string;
  clientSecret: string;
  /** The service account's refresh token, as the operator configured it. */
  refreshToken: string;
  /** The channels that exist, as `<team-id>/<channel-id>`. */
  channels: readonly string[];
  /** A per-channel posting limit; beyond it, 429 with Retry-After. None by default. */
  rateLimit?: ChannelRateLimit;
  /** Seconds an access token lives (`expires_in`). Default 3599. */
  accessTokenSeconds?: number;
}

/** A message the fake holds, as posted. */
export interface FakeTeamsMessage {
  id: string;
  teamId: string;
  channelId: string;
  /** The root's id for a reply. */
  replyToId?: string;
  createdAt: number;
  webUrl: string;
  summary?: string;
  bodyHtml: string;
  /** Each attachment with its card parsed from its JSON string. */
  attachments: { id: string; contentType: string; card: unknown }[];
  /** The request body as received. */
  raw: string;
}

export type FakeGraphBehaviour =
  /** 429 with this Retry-After (seconds). */
  | { retryAfterSeconds: number }
  /** This HTTP status with a Graph error body whose code is `code` and whose message is `message`. */
  | { status: number; code: string; message?: string }
  /** Handles the request (a post is stored), then drops the connection before answering. */
  | { dropAfterHandling: true };

export interface FakeMicrosoftGraph {
  /** The Graph base URL to configure (`graphUrl`): `http://127.0.0.1:<port>/v1.0/`. */
  graphUrl: string;
  /** The token service's base URL to configure (`loginUrl`): `http://127.0.0.1:<port>/`. */
  loginUrl: string;
  /** Every request, in order. */
  requests: SeenRequest[];
  /** Every message posted (roots and replies), in order. */
  posts: FakeTeamsMessage[];
  /** Resolves once `count` messages have been posted in total. */
  waitForPosts(count: number): Promise<void>;
  /** How many access tokens the token endpoint issued. */
  tokensIssued(): number;
  /** How many posts the rate limit refused. */
  rateLimitedCount(): number;
  /** The next request of this kind behaves as told (queued, first in first out). */
  failNext(kind: "token" | "post" | "list", behaviour: FakeGraphBehaviour): void;
  close(): Promise<void>;
}

/** Teams' limit on one message, its request body included. */
const MESSAGE_LIMIT_BYTES = 28 * 1024;
const CARD_TYPE = "application/vnd.microsoft.card.adaptive";

export async function startFakeMicrosoftGraph(options: FakeMicrosoftGraphOptions): Promise<FakeMicrosoftGraph> {
  const posts: FakeTeamsMessage[] = [];
  const posted = createChangeSignal();
  const refreshTokens = new Set([options.refreshToken]);
  const accessTokens = new Set<string>();
  const queued: Record<"token" | "post" | "list", FakeGraphBehaviour[]> = { token: [], post: [], list: [] };
  const takeSlot = channelBuckets(options.rateLimit);
  let issued = 0;
  let lastId = 0;
  let rateLimited = 0;
  let baseUrl = "";

  const token = (request: SeenRequest, response: ServerResponse, tenant: string) => {
    const form = new URLSearchParams(request.body);
    const behaviour = queued.token.shift();
    if (behaviour !== undefined && "status" in behaviour) {
      return sendJson(response, behaviour.status, { error: behaviour.code, error_description: behaviour.message ?? behaviour.code });
    }
    if (tenant !== options.tenantId) return aadError(response, 400, "invalid_request", "AADSTS90002: Tenant not found.");
    if (form.get("client_id") !== options.clientId)
      return aadError(response, 400, "unauthorized_client", "AADSTS700016: Application not found in the directory.");
    if (form.get("client_secret") !== options.clientSecret) return aadError(response, 401, "invalid_client", "AADSTS7000215: Invalid client secret provided.");
    if (form.get("grant_type") !== "refresh_token")
      return aadError(response, 400, "unsupported_grant_type", "AADSTS70003: The app requested an unsupported grant type.");
    if (!refreshTokens.has(form.get("refresh_token") ?? ""))
      return aadError(response, 400, "invalid_grant", "AADSTS70000: The provided value for the 'refresh_token' is not valid.");
    issued += 1;
    const access = `fake-access-${issued}-${Math.random().toString(36).slice(2)}`;
    const refresh = `fake-refresh-${issued}-${Math.random().toString(36).slice(2)}`;
    accessTokens.add(access);
    refreshTokens.add(refresh);
    sendJson(response, 200, {
      token_type: "Bearer",
      scope: form.get("scope") ?? "",
      expires_in: options.accessTokenSeconds ?? 3599,
      ext_expires_in: options.accessTokenSeconds ?? 3599,
      access_token: access,
      refresh_token: refresh,
    });
  };

  const chatMessage = (message: FakeTeamsMessage) => ({
    id: message.id,
    replyToId: message.replyToId ?? null,
    etag: message.id,
    messageType: "message",
    createdDateTime: new Date(message.createdAt).toISOString(),
    lastModifiedDateTime: new Date(message.createdAt).toISOString(),
    subject: null,
    summary: message.summary ?? null,
    importance: "normal",
    webUrl: message.webUrl,
    from: { user: { id: "00000000-0000-0000-0000-00000000f00d", displayName: "Playbook findings", userIdentityType: "aadUser" } },
    body: { contentType: "html", content: message.bodyHtml },
    channelIdentity: { teamId: message.teamId, channelId: message.channelId },
    attachments: message.attachments.map((attachment) => ({
      id: attachment.id,
      contentType: attachment.contentType,
      contentUrl: null,
      content: JSON.stringify(attachment.card),
      name: null,
      thumbnailUrl: null,
    })),
    mentions: [],
    reactions: [],
  });

  const post = (request: SeenRequest, response: ServerResponse, teamId: string, channelId: string, replyTo: string | undefined) => {
    const behaviour = queued.post.shift();
    if (behaviour !== undefined && "retryAfterSeconds" in behaviour) return tooMany(response, behaviour.retryAfterSeconds);
    if (behaviour !== undefined && "status" in behaviour) return graphError(response, behaviour.status, behaviour.code, behaviour.message ?? behaviour.code);
    if (Buffer.byteLength(request.body) > MESSAGE_LIMIT_BYTES) return graphError(response, 413, "RequestEntityTooLarge", "Message size is over the limit.");
    if (replyTo !== undefined && !posts.some((message) => message.id === replyTo && message.channelId === channelId && message.replyToId === undefined)) {
      return graphError(response, 404, "NotFound", "Message not found.");
    }
    let parsed: ReturnType<typeof parseMessage>;
    try {
      parsed = parseMessage(request.body);
    } catch (error) {
      return graphError(response, 400, "BadRequest", error instanceof Error ? error.message : "Invalid request body.");
    }
    if (!takeSlot(`${teamId}/${channelId}`)) {
      rateLimited += 1;
      return tooMany(response, options.rateLimit?.retryAfterSeconds ?? 1);
    }
    const now = Math.max(Date.now(), lastId + 1);
    lastId = now;
    const id = String(now);
    const root = replyTo ?? id;
    const message: FakeTeamsMessage = {
      id,
      teamId,
      channelId,
      ...(replyTo === undefined ? {} : { replyToId: replyTo }),
      createdAt: now,
      webUrl: `https://teams.microsoft.com/l/message/${encodeURIComponent(channelId)}/${id}?groupId=${teamId}&tenantId=${options.tenantId}&createdTime=${now}&parentMessageId=${root}`,
      ...(parsed.summary === undefined ? {} : { summary: parsed.summary }),
      bodyHtml: parsed.bodyHtml,
      attachments: parsed.attachments,
      raw: request.body,
    };
    posts.push(message);
    posted.changed();
    if (behaviour !== undefined && "dropAfterHandling" in behaviour) {
      response.destroy();
      return;
    }
    sendJson(response, 201, { "@odata.context": `${baseUrl}/v1.0/$metadata#chatMessage`, ...chatMessage(message) });
  };

  const list = (response: ServerResponse, url: URL, teamId: string, channelId: string, replyTo: string | undefined) => {
    const behaviour = queued.list.shift();
    if (behaviour !== undefined && "retryAfterSeconds" in behaviour) return tooMany(response, behaviour.retryAfterSeconds);
    if (behaviour !== undefined && "status" in behaviour) return graphError(response, behaviour.status, behaviour.code, behaviour.message ?? behaviour.code);
    const top = Number(url.searchParams.get("$top") ?? "20");
    if (!Number.isInteger(top) || top < 1 || top > 50)
      return graphError(response, 400, "BadRequest", "Invalid page size requested, the page size should be between 1 and 50.");
    const skip = Number(url.searchParams.get("$skiptoken") ?? "0");
    const all = posts
      .filter((message) => message.teamId === teamId && message.channelId === channelId && message.replyToId === replyTo)
      .sort((a, b) => b.createdAt - a.createdAt);
    const page = all.slice(skip, skip + top);
    const next = skip + top < all.length ? new URL(url.href) : undefined;
    next?.searchParams.set("$skiptoken", String(skip + top));
    sendJson(response, 200, {
      "@odata.context": `${baseUrl}/v1.0/$metadata#chatMessages`,
      ...(next === undefined ? {} : { "@odata.nextLink": next.href }),
      value: page.map(chatMessage),
    });
  };

  const server = await startTestHttpServer((request, response) => {
    const url = new URL(request.url, baseUrl);
    const tokenPath = /^\/([^/]+)\/oauth2\/v2\.0\/token$/.exec(url.pathname);
    if (tokenPath?.[1] !== undefined) {
      if (request.method !== "POST") return aadError(response, 405, "invalid_request", "AADSTS900561: The endpoint only accepts POST requests.");
      return token(request, response, decodeURIComponent(tokenPath[1]));
    }
    const route = /^\/v1\.0\/teams\/([^/]+)\/channels\/([^/]+)\/messages(?:\/([^/]+)\/replies)?$/.exec(url.pathname);
    if (route?.[1] === undefined || route[2] === undefined)
      return graphError(response, 400, "BadRequest", `Resource not found for the segment '${url.pathname}'.`);
    const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? "")?.[1];
    if (bearer === undefined || !accessTokens.has(bearer)) {
      return graphError(response, 401, "InvalidAuthenticationToken", bearer === undefined ? "Access token is empty." : "IDX14100: JWT is not well formed.");
    }
    const teamId = decodeURIComponent(route[1]);
    const channelId = decodeURIComponent(route[2]);
    const replyTo = route[3] === undefined ? undefined : decodeURIComponent(route[3]);
    if (!options.channels.includes(`${teamId}/${channelId}`)) return graphError(response, 404, "NotFound", "Channel not found.");
    if (request.method === "POST") return post(request, response, teamId, channelId, replyTo);
    if (request.method === "GET") return list(response, url, teamId, channelId, replyTo);
    graphError(response, 405, "MethodNotAllowed", "The method is not allowed.");
  });
  baseUrl = server.url;

  return {
    graphUrl: `${server.url}/v1.0/`,
    loginUrl: `${server.url}/`,
    requests: server.requests,
    posts,
    waitForPosts: (count) => posted.until(() => posts.length >= count),
    tokensIssued: () => issued,
    rateLimitedCount: () => rateLimited,
    failNext: (kind, behaviour) => {
      queued[kind].push(behaviour);
    },
    close: () => server.close(),
  };
}

/** The chatMessage fields the fake checks and keeps; throws on what Graph refuses. */
function parseMessage(text: string): { summary?: string; bodyHtml: string; attachments: FakeTeamsMessage["attachments"] } {
  const body: unknown = JSON.parse(text);
  if (typeof body !== "object" || body === null || !("body" in body)) throw new Error("Message body cannot be empty.");
  const messageBody = body.body;
  if (typeof messageBody !== "object" || messageBody === null || !("content" in messageBody) || typeof messageBody.content !== "string") {
    throw new Error("Message body cannot be empty.");
  }
  const html = messageBody.content;
  const summary = "summary" in body && typeof body.summary === "string" ? body.summary : undefined;
  const attachments: FakeTeamsMessage["attachments"] = [];
  const raw = "attachments" in body && Array.isArray(body.attachments) ? (body.attachments as unknown[]) : [];
  for (const attachment of raw) {
    if (typeof attachment !== "object" || attachment === null) throw new Error("Invalid attachment.");
    const id = "id" in attachment && typeof attachment.id === "string" ? attachment.id : "";
    const contentType = "contentType" in attachment && typeof attachment.contentType === "string" ? attachment.contentType : "";
    if (!html.includes(`<attachment id="${id}"></attachment>`)) throw new Error(`Attachment ${id} is not referenced in the message body.`);
    if (contentType !== CARD_TYPE) throw new Error(`Unsupported attachment content type ${contentType}.`);
    const content = "content" in attachment && typeof attachment.content === "string" ? attachment.content : "";
    const card: unknown = JSON.parse(content);
    if (typeof card !== "object" || card === null || !("type" in card) || card.type !== "AdaptiveCard") throw new Error("The attachment is no Adaptive Card.");
    attachments.push({ id, contentType, card });
  }
  if (attachments.length === 0 && html.trim() === "") throw new Error("Message body cannot be empty.");
  return { ...(summary === undefined ? {} : { summary }), bodyHtml: html, attachments };
}

function graphError(response: ServerResponse, status: number, code: string, message: string): void {
  sendJson(response, status, {
    error: { code, message, innerError: { date: new Date().toISOString(), "request-id": "00000000-0000-0000-0000-000000000000" } },
  });
}

function aadError(response: ServerResponse, status: number, error: string, description: string): void {
  sendJson(response, status, {
    error,
    error_description: description,
    error_codes: [Number(/AADSTS(\d+)/.exec(description)?.[1] ?? 0)],
    timestamp: new Date().toISOString(),
  });
}

function tooMany(response: ServerResponse, retryAfterSeconds: number): void {
  const text = JSON.stringify({ error: { code: "TooManyRequests", message: "Too many requests." } });
  response.writeHead(429, { "content-type": "application/json", "content-length": Buffer.byteLength(text), "retry-after": String(retryAfterSeconds) });
  response.end(text);
}
