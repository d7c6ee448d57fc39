import { createHmac } from "node:crypto";
import type { IncomingHttpHeaders, ServerResponse } from "node:http";
import { channelBuckets, type ChannelRateLimit } from "./channel-rate-limit.js";
import { startTestHttpServer, type SeenRequest } from "./test-http-server.js";

/** A message as Slack's API returns it: any JSON a real message carries, with its `ts`. */
export type FakeSlackMessage = Record<string, unknown> & { ts: string };

/** A channel and what it already holds. */
export interface FakeSlackChannel {
  /** Whether the app is a member; `false` answers `not_in_channel`, as Slack does for a public channel. */
  member?: boolean;
  /** Top-level messages. */
  messages?: FakeSlackMessage[];
  /** Thread replies, by their parent's `ts` (the parent is one of `messages`). */
  replies?: Record<string, FakeSlackMessage[]>;
}

export interface FakeSlackOptions {
  /** The only bot token accepted (`Authorization: Bearer <token>`); others get `invalid_auth`. */
  token: string;
  /** The channels that exist; others answer `channel_not_found`. Default: any channel exists, empty, the app a member. */
  channels?: Record<string, FakeSlackChannel>;
  /** A per-channel limit on `chat.postMessage`; beyond it, 429 with Retry-After. None by default. */
  rateLimit?: ChannelRateLimit;
}

/** A Web API call as the fake saw it, and the POST of a file's bytes to its upload URL (method `upload`). */
export interface FakeSlackCall {
  method: string;
  /** The arguments, form-encoded or JSON, every value as Slack receives it: a string (objects still JSON). */
  args: Record<string, string>;
  headers: IncomingHttpHeaders;
  /** When the call arrived (epoch ms). */
  at: number;
}

/** A message the service created: by `chat.postMessage`, or by `files.completeUploadExternal` sharing files. */
export interface PostedSlackMessage {
  channel: string;
  ts: string;
  threadTs?: string;
  text: string;
  /** The blocks, parsed. */
  blocks?: unknown;
  metadata?: unknown;
  /** The files a `files.completeUploadExternal` shared in it. */
  files?: SharedSlackFile[];
}

/** A file shared in a message: what was uploaded for it. */
export interface SharedSlackFile {
  id: string;
  title: string;
  filename: string;
  altText?: string;
  bytes: Buffer;
}

/** What the next call of a method does instead of its normal answer. */
export type FakeSlackBehaviour =
  /** 429 `{ok:false, error:"ratelimited"}` with this Retry-After (seconds). */
  | { retryAfterSeconds: number }
  /** This HTTP status with this JSON body, or a plain-text body (as a proxy in front of Slack answers). */
  | { httpStatus: number; body?: object }
  /** HTTP 200 `{ok:false, error}`. */
  | { error: string }
  /** Handles the call (a post is stored), then drops the connection before answering. */
  | { dropAfterHandling: true }
  /** Handles the call, then never answers (the connection stays open until the client gives up). */
  | { holdAfterHandling: true };

export interface FakeSlack {
  /** The Web API base URL to configure (`slackApiUrl`): `http://127.0.0.1:<port>/api/`. */
  apiUrl: string;
  /** Every call, in order. */
  calls: FakeSlackCall[];
  /** Every message the service created, in order (as `chat.update` left it). */
  posts: PostedSlackMessage[];
  /** Every `chat.update` the fake applied, in order: the message's channel and ts, and its new text and blocks. */
  updates: Array<{ channel: string; ts: string; text?: string; blocks?: unknown }>;
  /** Every view `views.open` opened, with the `trigger_id` it was opened with. */
  views: Array<{ triggerId: string; view: Record<string, unknown> }>;
  /** The messages the service created in one channel, oldest first. */
  messages(channel: string): PostedSlackMessage[];
  /** The permalink the fake gives a message (what `chat.getPermalink` answers). */
  permalinkOf(channel: string, ts: string, threadTs?: string): string;
  /** How many posts the per-channel rate limit refused. */
  rateLimitedCount(): number;
  /** The next call of `method` behaves as told (queued, first in first out). */
  failNext(method: string, behaviour: FakeSlackBehaviour): void;
  /** While true, every connection is dropped unanswered, as when Slack cannot be reached. */
  down: boolean;
  close(): Promise<void>;
}

/** Slack's limits on one message and on a file's alt text. */
const LIMITS = { blocks: 50, sectionChars: 3_000, messageChars: 12_000, altTextChars: 1_000 };

/** A message of a channel as the fake lists it: seeded or posted, top-level or in a thread. */
interface Listed {
  ts: string;
  threadTs?: string;
  json: Record<string, unknown>;
}

/**
 * Slack's Web API on 127.0.0.1 as `@slack/web-api` speaks it: every method is `POST /api/<method>`,
 * form-encoded (or JSON) with objects as JSON, `Authorization: Bearer`; answers are HTTP 200 `{ok:true,…}`
 * or `{ok:false, error}` (`invalid_auth`, `channel_not_found`, `not_in_channel`, `thread_not_found`,
 * `message_not_found`, …), and 429 with `Retry-After` (seconds) when rate-limited.
 *
 * - `conversations.history` (newest first) and `conversations.replies` (the parent first, whatever the
 *   bounds, then its replies oldest first) over seeded and posted messages, bounded by `latest`, `oldest`,
 *   `inclusive` and `limit`; metadata only with `include_all_metadata`. A ts that names no message gives an
 *   empty history, as Slack's does.
 * - `chat.postMessage`, refused as Slack refuses a message over its limits (50 blocks, 3000 characters per
 *   section, about 12,000 per message), and `chat.getPermalink`.
 * - The external upload flow `filesUploadV2` drives: `files.getUploadURLExternal` (`filename`, `length`;
 *   `alt_text` at most 1000 characters) answers an `upload_url` on this server and a `file_id`; the bytes
 *   are POSTed there (raw or multipart; pre-authorized: no token) and must be `length` long; then
 *   `files.completeUploadExternal` (`files` as JSON `[{id,title}]`, `channel_id`, `thread_ts`) shares them
 *   in one message of the channel.
 */
export async function startFakeSlack(options: FakeSlackOptions): Promise<FakeSlack> {
  const calls: FakeSlackCall[] = [];
  const posts: PostedSlackMessage[] = [];
  const updates: FakeSlack["updates"] = [];
  const views: FakeSlack["views"] = [];
  const scripted = new Map<string, FakeSlackBehaviour[]>();
  const takeToken = channelBuckets(options.rateLimit);
  /** Files asked for by files.getUploadURLExternal, and their bytes once uploaded. */
  const uploads = new Map<string, { filename: string; length: number; altText?: string; bytes?: Buffer }>();
  const state = { down: false };
  let rateLimited = 0;
  let lastMicros = 0n;
  let fileCount = 0;
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
  const channelOf = (id: string): FakeSlackChannel | undefined => (options.channels === undefined ? {} : options.channels[id]);

  const listed = (channel: string): Listed[] => {
    const seeded = channelOf(channel);
    const all: Listed[] = (seeded?.messages ?? []).map((json) => ({ ts: json.ts, json }));
    for (const [parent, replies] of Object.entries(seeded?.replies ?? {})) {
      for (const json of replies) all.push({ ts: json.ts, threadTs: parent, json: { thread_ts: parent, ...json } });
    }
    for (const post of posts.filter((candidate) => candidate.channel === channel)) {
      const json = {
        type: "message",
        ts: post.ts,
        text: post.text,
        ...(post.threadTs === undefined ? {} : { thread_ts: post.threadTs }),
        ...(post.blocks === undefined ? {} : { blocks: post.blocks }),
        ...(post.metadata === undefined ? {} : { metadata: post.metadata }),
        ...(post.files === undefined ? {} : { files: post.files.map((file) => ({ id: file.id, title: file.title, name: file.filename })) }),
      };
      all.push({ ts: post.ts, ...(post.threadTs === undefined ? {} : { threadTs: post.threadTs }), json });
    }
    return all;
  };
  const isThread = (channel: string, ts: string) => listed(channel).some((entry) => entry.threadTs === undefined && entry.ts === ts);

  const answer = (method: string, args: Record<string, string>): { status: number; body: object; headers?: Record<string, string> } => {
    const ok = (body: object) => ({ status: 200, body });
    if (method === "files.getUploadURLExternal") {
      const length = Number(args.length);
      if ((args.filename ?? "") === "" || !Number.isInteger(length) || length <= 0) return ok({ ok: false, error: "invalid_arguments" });
      if ((args.alt_text ?? "").length > LIMITS.altTextChars) return ok({ ok: false, error: "alt_txt_too_large" });
      fileCount += 1;
      const fileId = `F${String(fileCount).padStart(10, "0")}`;
      uploads.set(fileId, { filename: args.filename ?? "", length, ...(args.alt_text === undefined ? {} : { altText: args.alt_text }) });
      return ok({ ok: true, upload_url: `${baseUrl}/upload/v1/${fileId}`, file_id: fileId });
    }
    if (method === "files.completeUploadExternal") {
      let listedFiles: unknown;
      try {
        listedFiles = JSON.parse(args.files ?? "");
      } catch {
        return ok({ ok: false, error: "invalid_arguments" });
      }
      if (!Array.isArray(listedFiles) || listedFiles.length === 0) return ok({ ok: false, error: "invalid_arguments" });
      const files: SharedSlackFile[] = [];
      for (const file of listedFiles as Array<{ id?: unknown; title?: unknown }>) {
        const upload = typeof file.id === "string" ? uploads.get(file.id) : undefined;
        if (upload?.bytes === undefined || typeof file.id !== "string") return ok({ ok: false, error: "file_not_found" });
        files.push({
          id: file.id,
          title: typeof file.title === "string" ? file.title : upload.filename,
          filename: upload.filename,
          bytes: upload.bytes,
          ...(upload.altText === undefined ? {} : { altText: upload.altText }),
        });
      }
      const channel = args.channel_id;
      if (channel !== undefined) {
        const seeded = channelOf(channel);
        if (seeded === undefined) return ok({ ok: false, error: "channel_not_found" });
        if (seeded.member === false) return ok({ ok: false, error: "not_in_channel" });
        const threadTs = args.thread_ts;
        if (threadTs !== undefined && !isThread(channel, threadTs)) return ok({ ok: false, error: "thread_not_found" });
        posts.push({ channel, ts: nextTs(), text: args.initial_comment ?? "", files, ...(threadTs === undefined ? {} : { threadTs }) });
      }
      for (const file of files) uploads.delete(file.id);
      return ok({ ok: true, files: files.map(({ id, title }) => ({ id, title })) });
    }

    if (method === "views.open") {
      let view: unknown;
      try {
        view = JSON.parse(args.view ?? "");
      } catch {
        return ok({ ok: false, error: "invalid_arguments" });
      }
      if ((args.trigger_id ?? "") === "" || typeof view !== "object" || view === null) return ok({ ok: false, error: "invalid_arguments" });
      views.push({ triggerId: args.trigger_id ?? "", view: view as Record<string, unknown> });
      return ok({ ok: true, view: { id: `V${String(views.length).padStart(10, "0")}`, ...view } });
    }

    const channel = args.channel ?? "";
    const seeded = channelOf(channel);
    if (seeded === undefined) return ok({ ok: false, error: "channel_not_found" });
    if (seeded.member === false) return ok({ ok: false, error: "not_in_channel" });
    const limit = Number(args.limit ?? "100");
    const shown = ({ json }: Listed) => {
      if (args.include_all_metadata === "true") return json;
      const { metadata: _metadata, ...rest } = json;
      return rest;
    };
    switch (method) {
      case "conversations.history": {
        const found = listed(channel)
          .filter((entry) => entry.threadTs === undefined && inBounds(entry.ts, args))
          .sort((a, b) => compareTs(b.ts, a.ts));
        return ok({ ok: true, messages: found.slice(0, limit).map(shown), has_more: found.length > limit });
      }
      case "conversations.replies": {
        const all = listed(channel);
        const parent = all.find((entry) => entry.threadTs === undefined && entry.ts === args.ts);
        if (parent === undefined) return ok({ ok: false, error: "thread_not_found" });
        const replies = all.filter((entry) => entry.threadTs === parent.ts && inBounds(entry.ts, args)).sort((a, b) => compareTs(a.ts, b.ts));
        return ok({ ok: true, messages: [parent, ...replies].slice(0, limit).map(shown), has_more: replies.length + 1 > limit });
      }
      case "chat.postMessage": {
        if (!takeToken(channel)) {
          rateLimited += 1;
          const seconds = options.rateLimit?.retryAfterSeconds ?? 1;
          return { status: 429, body: { ok: false, error: "ratelimited" }, headers: { "retry-after": String(seconds) } };
        }
        let blocks: unknown;
        try {
          blocks = args.blocks === undefined ? undefined : JSON.parse(args.blocks);
        } catch {
          return ok({ ok: false, error: "invalid_blocks" });
        }
        const problem = checkLimits(blocks);
        if (problem !== undefined) return ok({ ok: false, error: problem });
        if ((args.text ?? "") === "" && blocks === undefined) return ok({ ok: false, error: "no_text" });
        const threadTs = args.thread_ts;
        if (threadTs !== undefined && !isThread(channel, threadTs)) return ok({ ok: false, error: "thread_not_found" });
        const message: PostedSlackMessage = {
          channel,
          ts: nextTs(),
          text: args.text ?? "",
          ...(blocks === undefined ? {} : { blocks }),
          ...(threadTs === undefined ? {} : { threadTs }),
          ...(args.metadata === undefined ? {} : { metadata: JSON.parse(args.metadata) as unknown }),
        };
        posts.push(message);
        return ok({ ok: true, channel, ts: message.ts, message: { type: "message", text: message.text, ts: message.ts } });
      }
      case "chat.update": {
        const message = posts.find((candidate) => candidate.channel === channel && candidate.ts === args.ts);
        if (message === undefined) return ok({ ok: false, error: "message_not_found" });
        let blocks: unknown;
        try {
          blocks = args.blocks === undefined ? undefined : JSON.parse(args.blocks);
        } catch {
          return ok({ ok: false, error: "invalid_blocks" });
        }
        const problem = checkLimits(blocks);
        if (problem !== undefined) return ok({ ok: false, error: problem });
        // As Slack: blocks left out are kept, text left out is kept.
        if (blocks !== undefined) message.blocks = blocks;
        if (args.text !== undefined) message.text = args.text;
        updates.push({ channel, ts: message.ts, ...(args.text === undefined ? {} : { text: args.text }), ...(blocks === undefined ? {} : { blocks }) });
        return ok({ ok: true, channel, ts: message.ts, text: message.text });
      }
      case "chat.getPermalink": {
        const found = listed(channel).find((entry) => entry.ts === args.message_ts);
        if (found === undefined) return ok({ ok: false, error: "message_not_found" });
        return ok({ ok: true, channel, permalink: permalinkOf(channel, found.ts, found.threadTs) });
      }
      default:
        return ok({ ok: false, error: "unknown_method" });
    }
  };

  /** Takes the bytes POSTed to an upload URL, raw or as the one file part of a multipart form. */
  const upload = async (request: SeenRequest, response: ServerResponse, fileId: string) => {
    const pending = uploads.get(fileId);
    const type = request.headers["content-type"] ?? "";
    let bytes: Buffer | undefined = request.bytes;
    if (type.startsWith("multipart/form-data")) {
      const form = await new Response(request.bytes, { headers: { "content-type": type } }).formData();
      const file = [...form.values()].find((value) => typeof value !== "string");
      bytes = file === undefined || typeof file === "string" ? undefined : Buffer.from(await file.arrayBuffer());
    }
    calls.push({ method: "upload", args: { file_id: fileId, length: String(bytes?.length ?? 0) }, headers: request.headers, at: Date.now() });
    if (request.method !== "POST" || pending === undefined || bytes === undefined || bytes.length !== pending.length) {
      return void response.writeHead(400, { "content-type": "text/plain" }).end("upload refused");
    }
    pending.bytes = bytes;
    response.writeHead(200, { "content-type": "text/plain" }).end(`OK - ${bytes.length}`);
  };

  const server = await startTestHttpServer(async (request, response) => {
    if (state.down) return void response.socket?.destroy();
    const uploadPath = /^\/upload\/v1\/(F\d+)$/.exec(request.url);
    if (uploadPath?.[1] !== undefined) return upload(request, response, uploadPath[1]);
    const method = request.url.replace(/^\/api\//, "").split("?")[0] ?? "";
    const args = argsOf(request);
    calls.push({ method, args, headers: request.headers, at: Date.now() });
    if (request.method !== "POST" || !request.url.startsWith("/api/")) return send(response, 404, { ok: false, error: "unknown_method" });
    if (request.headers.authorization !== `Bearer ${options.token}`) return send(response, 200, { ok: false, error: "invalid_auth" });
    const behaviour = scripted.get(method)?.shift();
    if (behaviour !== undefined && "retryAfterSeconds" in behaviour) {
      return send(response, 429, { ok: false, error: "ratelimited" }, { "retry-after": String(behaviour.retryAfterSeconds) });
    }
    if (behaviour !== undefined && "httpStatus" in behaviour) {
      if (behaviour.body !== undefined) return send(response, behaviour.httpStatus, behaviour.body);
      return void response.writeHead(behaviour.httpStatus, { "content-type": "text/plain" }).end("upstream trouble");
    }
    if (behaviour !== undefined && "error" in behaviour) return send(response, 200, { ok: false, error: behaviour.error });
    const answered = answer(method, args);
    if (behaviour !== undefined && "dropAfterHandling" in behaviour) return void response.destroy();
    // Handled, and the answer never sent: the caller cannot know.
    if (behaviour !== undefined && "holdAfterHandling" in behaviour) return;
    send(response, answered.status, answered.body, answered.headers);
  });
  baseUrl = server.url;

  return {
    apiUrl: `${server.url}/api/`,
    calls,
    posts,
    updates,
    views,
    messages: (channel) => posts.filter((message) => message.channel === channel),
    permalinkOf,
    rateLimitedCount: () => rateLimited,
    failNext(method, behaviour) {
      scripted.set(method, [...(scripted.get(method) ?? []), behaviour]);
    },
    get down() {
      return state.down;
    },
    set down(value) {
      state.down = value;
    },
    close: () => server.close(),
  };
}

/** The call's arguments: a form-encoded body, or a JSON one with every value as a string. */
function argsOf(request: SeenRequest): Record<string, string> {
  if (!(request.headers["content-type"] ?? "").startsWith("application/json")) return Object.fromEntries(new URLSearchParams(request.body));
  const parsed: unknown = JSON.parse(request.body);
  const args: Record<string, string> = {};
  if (typeof parsed === "object" && parsed !== null) {
    for (const [key, value] of Object.entries(parsed)) args[key] = typeof value === "string" ? value : JSON.stringify(value);
  }
  return args;
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

/** Slack's answer to blocks over its limits, or undefined when they are within them. */
function checkLimits(blocks: unknown): string | undefined {
  if (blocks === undefined) return undefined;
  if (!Array.isArray(blocks) || blocks.length === 0 || blocks.length > LIMITS.blocks) return "invalid_blocks";
  let total = 0;
  for (const block of blocks as unknown[]) {
    const text = sectionText(block);
    if (text === undefined) continue;
    if (text.length === 0 || text.length > LIMITS.sectionChars) return "invalid_blocks";
    total += text.length;
  }
  return total > LIMITS.messageChars ? "msg_blocks_too_long" : undefined;
}

function sectionText(block: unknown): string | undefined {
  if (typeof block !== "object" || block === null || !("text" in block)) return undefined;
  const text = block.text;
  if (typeof text !== "object" || text === null || !("text" in text) || typeof text.text !== "string") return undefined;
  return text.text;
}

function send(response: ServerResponse, status: number, body: object, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(text), ...headers });
  response.end(text);
}

/**
 * Slack's request signature (`X-Slack-Signature`): `v0=` and the hex HMAC-SHA256 of `v0:<timestamp>:<body>`
 * with the app's signing secret, as Slack signs every request it sends an app.
 */
export function slackSignature(signingSecret: string, timestamp: number, body: string): string {
  return `v0=${createHmac("sha256", signingSecret).update(`v0:${timestamp}:${body}`).digest("hex")}`;
}

/** An interactivity request as Slack sends it: form-encoded `payload` (JSON), signed, with its timestamp. */
export interface SlackInteractionRequest {
  /** The app's Request URL. */
  url: string;
  signingSecret: string;
  /** The interaction (`block_actions`, `view_submission`…), sent as the `payload` field. */
  payload: object;
  /** Unix seconds; now by default. */
  timestamp?: number;
  /** Sent instead of the right signature (a forgery). */
  signature?: string;
}

/** Sends an interaction to the app as Slack does; the same request can be sent again (a replay) with its `body` and headers. */
export async function sendSlackInteraction(
  request: SlackInteractionRequest,
): Promise<{ status: number; text: string; body: string; headers: Record<string, string> }> {
  const timestamp = request.timestamp ?? Math.floor(Date.now() / 1000);
  const body = new URLSearchParams({ payload: JSON.stringify(request.payload) }).toString();
  const headers = {
    "content-type": "application/x-www-form-urlencoded",
    "x-slack-request-timestamp": String(timestamp),
    "x-slack-signature": request.signature ?? slackSignature(request.signingSecret, timestamp, body),
  };
  const response = await fetch(request.url, { method: "POST", headers, body });
  return { status: response.status, text: await response.text(), body, headers };
}
