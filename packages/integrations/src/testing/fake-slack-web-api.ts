import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A Web API call as the fake saw it. */
export interface SlackCall {
  /** The method, from the path: `POST /api/<method>`. */
  method: string;
  /** The arguments, from the form-encoded or JSON body (every value as Slack receives it: a string). */
  args: Record<string, string>;
  headers: IncomingHttpHeaders;
  /** When the call arrived (epoch ms). */
  at: number;
}

/** A message the fake holds: any JSON a real message could carry, with its `ts`. */
export type FakeMessage = Record<string, unknown> & { ts: string };

export interface FakeChannel {
  /** Whether the app is a member: `false` answers `not_in_channel`, as Slack does for a public channel. */
  member?: boolean;
  /** Top-level messages. */
  messages?: FakeMessage[];
  /** Thread replies, by their parent's `ts` (the parent is one of `messages`). */
  replies?: Record<string, FakeMessage[]>;
}

/** An answer the fake gives instead of the normal one, once, to the next call of a method. */
export interface ScriptedAnswer {
  /** Never answers (the connection stays open until the client gives up or the fake closes). */
  hold?: boolean;
  status?: number;
  headers?: Record<string, string>;
  body?: unknown;
}

export interface FakeSlackWebApi {
  /** The base URL to configure as `slackApiUrl` (ends with `/api/`). */
  apiUrl: string;
  calls: SlackCall[];
  /** Queues an answer for the next call of `method`, before its normal answer. */
  answerNext(method: string, answer: ScriptedAnswer): void;
  close(): Promise<void>;
}

export interface FakeSlackOptions {
  /** The only token accepted (`Authorization: Bearer <token>`); others get `invalid_auth`. */
  token: string;
  channels: Record<string, FakeChannel>;
}

/**
 * A real HTTP server on 127.0.0.1 speaking the part of Slack's Web API the service reads:
 * `POST /api/conversations.history` and `/api/conversations.replies`, form-encoded or JSON, with
 * `Authorization: Bearer`. Errors come as HTTP 200 `{ok:false, error}` (`invalid_auth`,
 * `channel_not_found`, `not_in_channel`, `thread_not_found`), as Slack sends them. History and replies
 * honour `latest`, `oldest`, `inclusive` and `limit`; replies always list the parent first, whatever the
 * bounds, as Slack does.
 */
export async function startFakeSlackWebApi(options: FakeSlackOptions): Promise<FakeSlackWebApi> {
  const calls: SlackCall[] = [];
  const scripted = new Map<string, ScriptedAnswer[]>();

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const method = (request.url ?? "").replace(/^\/api\//, "").split("?")[0] ?? "";
      const call: SlackCall = { method, args: readArgs(request.headers, Buffer.concat(chunks).toString("utf8")), headers: request.headers, at: Date.now() };
      calls.push(call);
      const next = scripted.get(method)?.shift();
      if (next !== undefined) {
        if (next.hold !== true) send(response, next.status ?? 200, next.body ?? { ok: false, error: "ratelimited" }, next.headers);
        return;
      }
      if (request.method !== "POST" || !(request.url ?? "").startsWith("/api/")) {
        send(response, 404, { ok: false, error: "unknown_method" });
        return;
      }
      if (request.headers.authorization !== `Bearer ${options.token}`) {
        send(response, 200, { ok: false, error: "invalid_auth" });
        return;
      }
      send(response, 200, answer(options.channels, method, call.args));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    apiUrl: `http://127.0.0.1:${port}/api/`,
    calls,
    answerNext(method, scriptedAnswer) {
      const queue = scripted.get(method) ?? [];
      queue.push(scriptedAnswer);
      scripted.set(method, queue);
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

function answer(channels: Record<string, FakeChannel>, method: string, args: Record<string, string>): unknown {
  const channel = channels[args.channel ?? ""];
  if (channel === undefined) return { ok: false, error: "channel_not_found" };
  if (channel.member === false) return { ok: false, error: "not_in_channel" };
  const limit = Number(args.limit ?? "100");
  switch (method) {
    case "conversations.history": {
      // Newest first, as Slack lists history.
      const found = (channel.messages ?? []).filter((message) => inBounds(message.ts, args)).sort((a, b) => compareTs(b.ts, a.ts));
      return { ok: true, messages: found.slice(0, limit), has_more: found.length > limit };
    }
    case "conversations.replies": {
      const parent = (channel.messages ?? []).find((message) => message.ts === args.ts);
      if (parent === undefined) return { ok: false, error: "thread_not_found" };
      const replies = (channel.replies?.[parent.ts] ?? []).filter((message) => inBounds(message.ts, args)).sort((a, b) => compareTs(a.ts, b.ts));
      return { ok: true, messages: [parent, ...replies].slice(0, limit), has_more: replies.length + 1 > limit };
    }
    default:
      return { ok: false, error: "unknown_method" };
  }
}

function inBounds(ts: string, args: Record<string, string>): boolean {
  const inclusive = args.inclusive === "true" || args.inclusive === "1";
  if (args.oldest !== undefined && (inclusive ? compareTs(ts, args.oldest) < 0 : compareTs(ts, args.oldest) <= 0)) return false;
  if (args.latest !== undefined && (inclusive ? compareTs(ts, args.latest) > 0 : compareTs(ts, args.latest) >= 0)) return false;
  return true;
}

/** Slack timestamps compare as numbers; as fixed-width `seconds.micros` strings they also compare as text. */
function compareTs(a: string, b: string): number {
  return a.padStart(17, "0").localeCompare(b.padStart(17, "0"));
}

function readArgs(headers: IncomingHttpHeaders, body: string): Record<string, string> {
  if ((headers["content-type"] ?? "").startsWith("application/json")) {
    const parsed: unknown = JSON.parse(body);
    const args: Record<string, string> = {};
    if (typeof parsed === "object" && parsed !== null) {
      for (const [key, value] of Object.entries(parsed)) args[key] = typeof value === "string" ? value : JSON.stringify(value);
    }
    return args;
  }
  return Object.fromEntries(new URLSearchParams(body));
}

function send(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(text), ...headers });
  response.end(text);
}
