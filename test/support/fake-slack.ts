import { EventEmitter } from "node:events";
import type { ServerResponse } from "node:http";
import { sendJson, startTestHttpServer, type SeenRequest } from "@pes/local-services";

/** A message the fake holds: any JSON a real message carries, with its `ts`. */
export type SeededMessage = Record<string, unknown> & { ts: string };

export interface FakeChannel {
  /** Whether the app is a member; `false` answers `not_in_channel`, as Slack does for a public channel. */
  member?: boolean;
  /** Top-level messages. */
  messages?: SeededMessage[];
  /** Thread replies by their parent's `ts`. */
  replies?: Record<string, SeededMessage[]>;
}

/** A Web API call as the fake saw it: the method and its arguments (form fields, objects still JSON). */
export interface SlackCall {
  method: string;
  args: Record<string, string>;
}

/** A message the service posted. */
export interface PostedMessage {
  channel: string;
  ts: string;
  threadTs?: string;
  text: string;
  /** The blocks as JSON text, exactly as they arrived. */
  blocksJson: string;
  metadata?: unknown;
}

/** Files shared in a channel by the external upload flow: what was uploaded for each. */
export interface SharedFiles {
  channel: string;
  threadTs?: string;
  files: { id: string; title: string; bytes: number; png: boolean }[];
}

export interface FakeSlack {
  /** The Web API base URL to configure (`slack.apiUrl`), ending in `/api/`. */
  apiUrl: string;
  calls: SlackCall[];
  posts: PostedMessage[];
  shares: SharedFiles[];
  /** Resolves once `count` messages have been posted in total. */
  waitForPosts(count: number): Promise<void>;
  /** The permalink the fake gives a message (what `chat.getPermalink` answers). */
  permalinkOf(channel: string, ts: string, threadTs?: string): string;
  /** While true, every connection is dropped unanswered, as when Slack cannot be reached. */
  down: boolean;
  close(): Promise<void>;
}

/**
 * Slack's Web API on 127.0.0.1 as `@slack/web-api` speaks it (`POST /api/<method>`, form-encoded, objects
 * as JSON, `Authorization: Bearer`; errors as HTTP 200 `{ok:false,error}`): `conversations.history` and
 * `conversations.replies` over seeded and posted messages (bounded by `latest`/`oldest`/`inclusive`/
 * `limit`, metadata with `include_all_metadata`), `chat.postMessage` and `chat.getPermalink`, and the
 * external upload flow `filesUploadV2` drives: `files.getUploadURLExternal` answers an upload URL on this
 * server (pre-authorized: no token), the bytes are POSTed there, `files.completeUploadExternal` shares them.
 */
export async function startFakeSlack(options: { token: string; channels: Record<string, FakeChannel> }): Promise<FakeSlack> {
  const calls: SlackCall[] = [];
  const posts: PostedMessage[] = [];
  const shares: SharedFiles[] = [];
  const uploads = new Map<string, { filename: string; bytes?: number; png?: boolean }>();
  const posted = new EventEmitter();
  let lastMicros = 0n;
  const state = { down: false };
  /** The server's own address, for the upload URLs it hands out. */
  let baseUrl = "";

  const nextTs = () => {
    const now = BigInt(Date.now()) * 1000n;
    lastMicros = now > lastMicros ? now : lastMicros + 1n;
    const digits = lastMicros.toString();
    return `${digits.slice(0, -6)}.${digits.slice(-6)}`;
  };
  const permalinkOf = (channel: string, ts: string, threadTs?: string) =>
    `https://acme.slack.com/archives/${channel}/p${ts.replace(".", "")}${threadTs === undefined ? "" : `?thread_ts=${threadTs}&cid=${channel}`}`;

  /** Every message of a channel as Slack lists it: seeded and posted, with their thread. */
  const messagesOf = (channel: string): { message: Record<string, unknown>; ts: string; threadTs?: string }[] => {
    const seeded = options.channels[channel];
    const all: { message: Record<string, unknown>; ts: string; threadTs?: string }[] = [];
    for (const message of seeded?.messages ?? []) all.push({ message, ts: message.ts });
    for (const [parent, replies] of Object.entries(seeded?.replies ?? {})) {
      for (const message of replies) all.push({ message: { thread_ts: parent, ...message }, ts: message.ts, threadTs: parent });
    }
    for (const post of posts.filter((candidate) => candidate.channel === channel)) {
      const message = { type: "message", ts: post.ts, text: post.text, ...(post.threadTs === undefined ? {} : { thread_ts: post.threadTs }) };
      all.push({ message: post.metadata === undefined ? message : { ...message, metadata: post.metadata }, ts: post.ts, ...(post.threadTs === undefined ? {} : { threadTs: post.threadTs }) });
    }
    return all;
  };

  const answer = (method: string, args: Record<string, string>): object => {
    if (method === "files.getUploadURLExternal") {
      const id = `F${String(uploads.size + 1).padStart(10, "0")}`;
      uploads.set(id, { filename: args.filename ?? "" });
      return { ok: true, upload_url: `${baseUrl}/upload/${id}`, file_id: id };
    }
    if (method === "files.completeUploadExternal") {
      const channel = args.channel_id ?? "";
      if (options.channels[channel] === undefined) return { ok: false, error: "channel_not_found" };
      const listed = JSON.parse(args.files ?? "[]") as { id: string; title?: string }[];
      const files = listed.map(({ id, title }) => ({ id, title: title ?? uploads.get(id)?.filename ?? "", bytes: uploads.get(id)?.bytes ?? 0, png: uploads.get(id)?.png ?? false }));
      if (files.some((file) => file.bytes === 0)) return { ok: false, error: "file_not_found" };
      shares.push({ channel, ...(args.thread_ts === undefined ? {} : { threadTs: args.thread_ts }), files });
      return { ok: true, files: files.map(({ id, title }) => ({ id, title })) };
    }
    const channel = args.channel ?? "";
    const seeded = options.channels[channel];
    if (seeded === undefined) return { ok: false, error: "channel_not_found" };
    if (seeded.member === false) return { ok: false, error: "not_in_channel" };
    const limit = Number(args.limit ?? "100");
    const withMetadata = args.include_all_metadata === "true";
    const shown = (entry: { message: Record<string, unknown> }) => {
      if (withMetadata) return entry.message;
      const { metadata: _metadata, ...rest } = entry.message;
      return rest;
    };
    switch (method) {
      case "conversations.history": {
        const found = messagesOf(channel)
          .filter((entry) => entry.threadTs === undefined && inBounds(entry.ts, args))
          .sort((a, b) => compareTs(b.ts, a.ts));
        return { ok: true, messages: found.slice(0, limit).map(shown), has_more: found.length > limit };
      }
      case "conversations.replies": {
        const all = messagesOf(channel);
        const parent = all.find((entry) => entry.threadTs === undefined && entry.ts === args.ts);
        if (parent === undefined) return { ok: false, error: "thread_not_found" };
        const replies = all.filter((entry) => entry.threadTs === parent.ts && inBounds(entry.ts, args)).sort((a, b) => compareTs(a.ts, b.ts));
        return { ok: true, messages: [parent, ...replies].slice(0, limit).map(shown), has_more: replies.length + 1 > limit };
      }
      case "chat.postMessage": {
        const threadTs = args.thread_ts;
        if (threadTs !== undefined && !messagesOf(channel).some((entry) => entry.threadTs === undefined && entry.ts === threadTs)) {
          return { ok: false, error: "thread_not_found" };
        }
        const post: PostedMessage = {
          channel,
          ts: nextTs(),
          text: args.text ?? "",
          blocksJson: args.blocks ?? "[]",
          ...(threadTs === undefined ? {} : { threadTs }),
          ...(args.metadata === undefined ? {} : { metadata: JSON.parse(args.metadata) as unknown }),
        };
        posts.push(post);
        posted.emit("post");
        return { ok: true, channel, ts: post.ts, message: { type: "message", ts: post.ts, text: post.text } };
      }
      case "chat.getPermalink": {
        const found = messagesOf(channel).find((entry) => entry.ts === args.message_ts);
        if (found === undefined) return { ok: false, error: "message_not_found" };
        return { ok: true, channel, permalink: permalinkOf(channel, found.ts, found.threadTs) };
      }
      default:
        return { ok: false, error: "unknown_method" };
    }
  };

  const server = await startTestHttpServer((request: SeenRequest, response: ServerResponse) => {
    if (state.down) {
      response.socket?.destroy();
      return;
    }
    const upload = /^\/upload\/(F\d+)$/.exec(request.url);
    const pending = uploads.get(upload?.[1] ?? "");
    if (upload !== null && pending !== undefined) {
      pending.bytes = Buffer.byteLength(request.body);
      // The PNG signature's letters, whatever the part's encoding did to its first byte.
      pending.png = request.body.includes("PNG\r\n");
      return void response.writeHead(200, { "content-type": "text/plain" }).end("OK");
    }
    const method = request.url.replace(/^\/api\//, "").split("?")[0] ?? "";
    const args = Object.fromEntries(new URLSearchParams(request.body));
    calls.push({ method, args });
    if (request.method !== "POST" || !request.url.startsWith("/api/")) return sendJson(response, 404, { ok: false, error: "unknown_method" });
    if (request.headers.authorization !== `Bearer ${options.token}`) return sendJson(response, 200, { ok: false, error: "invalid_auth" });
    sendJson(response, 200, answer(method, args));
  });

  baseUrl = server.url;
  return {
    apiUrl: `${server.url}/api/`,
    calls,
    posts,
    shares,
    waitForPosts: (count) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (posts.length < count) return;
          posted.off("post", check);
          resolve();
        };
        posted.on("post", check);
        check();
      }),
    permalinkOf,
    get down() {
      return state.down;
    },
    set down(value) {
      state.down = value;
    },
    close: () => server.close(),
  };
}

function inBounds(ts: string, args: Record<string, string>): boolean {
  const inclusive = args.inclusive === "true" || args.inclusive === "1";
  if (args.oldest !== undefined && (inclusive ? compareTs(ts, args.oldest) < 0 : compareTs(ts, args.oldest) <= 0)) return false;
  if (args.latest !== undefined && (inclusive ? compareTs(ts, args.latest) > 0 : compareTs(ts, args.latest) >= 0)) return false;
  return true;
}

/** Slack timestamps compare as numbers: as fixed-width `seconds.micros` text they compare the same. */
function compareTs(a: string, b: string): number {
  const [as = "", am = ""] = a.split(".");
  const [bs = "", bm = ""] = b.split(".");
  const left = `${as.padStart(12, "0")}.${am.padEnd(6, "0")}`;
  const right = `${bs.padStart(12, "0")}.${bm.padEnd(6, "0")}`;
  return left < right ? -1 : left > right ? 1 : 0;
}
