import { createServer, type IncomingMessage, type ServerResponse } from "node:http";

/**
 * A local Slack Web API for tests, speaking its wire format as `@slack/web-api` uses it: every method is
 * `POST /api/<method>`, form-encoded with objects (blocks, metadata) as JSON, `Authorization: Bearer`;
 * answers are HTTP 200 `{ok:true,…}` or `{ok:false,error}`, and 429 with `Retry-After` (seconds) when
 * rate-limited. It enforces the message limits Slack enforces (50 blocks, 3000 characters per section,
 * about 12,000 characters per message), so that a message over them fails here as it would there.
 *
 * Files go up by the external upload flow, as `filesUploadV2` drives it: `files.getUploadURLExternal`
 * (`filename`, `length`; `alt_text` at most 1000 characters) answers an `upload_url` on this server and a
 * `file_id`; the bytes are POSTed there (raw or multipart) and must be `length` long; then
 * `files.completeUploadExternal` (`files` as JSON `[{id,title}]`, `channel_id`, `thread_ts`) shares the
 * uploaded files in one message of the channel (a reply when `thread_ts` names a message there).
 */
export interface FakeSlack {
  /** The `slackApiUrl` to give the client: `http://127.0.0.1:<port>/api/`. */
  apiUrl: string;
  /** Every call received, in order. */
  calls: FakeSlackCall[];
  /** Messages stored per channel, oldest first. */
  messages(channel: string): StoredMessage[];
  /** How many posts the per-channel rate limit refused. */
  rateLimitedCount(): number;
  /** The next call of `method` behaves as told instead of normally (queued, first in first out). */
  failNext(method: string, behaviour: Behaviour): void;
  close(): Promise<void>;
}

export interface FakeSlackCall {
  method: string;
  params: Record<string, string>;
  authorization: string | undefined;
}

export interface StoredMessage {
  ts: string;
  channel: string;
  threadTs?: string;
  text: string;
  blocks: unknown;
  metadata?: unknown;
  /** The files a `files.completeUploadExternal` shared in it. */
  files?: SharedFile[];
}

/** A file shared in a message: what was uploaded for it. */
export interface SharedFile {
  id: string;
  title: string;
  filename: string;
  altText?: string;
  bytes: Buffer;
}

export type Behaviour =
  /** 429 with this Retry-After (seconds). */
  | { retryAfterSeconds: number }
  /** This HTTP status with a plain body. */
  | { httpStatus: number }
  /** HTTP 200 `{ok:false, error}`. */
  | { error: string }
  /** Handles the call (a post is stored), then drops the connection before answering. */
  | { dropAfterHandling: true };

export interface FakeSlackOptions {
  /** The only bot token accepted. */
  token: string;
  /**
   * A token bucket per channel for `chat.postMessage`: `burst` posts at once, one more every `refillMs`;
   * a post without a token is answered 429 with `retryAfterSeconds`. None by default.
   */
  rateLimit?: { burst: number; refillMs: number; retryAfterSeconds: number };
  /** Channels that exist; others answer `channel_not_found`. Default: any. */
  channels?: readonly string[];
}

const LIMITS = { blocks: 50, sectionChars: 3_000, messageChars: 12_000, altTextChars: 1_000 };

/** Starts the fake on 127.0.0.1 and a free port. */
export async function startFakeSlack(options: FakeSlackOptions): Promise<FakeSlack> {
  const calls: FakeSlackCall[] = [];
  const stored = new Map<string, StoredMessage[]>();
  const scripted = new Map<string, Behaviour[]>();
  const buckets = new Map<string, { tokens: number; at: number }>();
  let rateLimited = 0;
  let lastMicros = 0n;
  /** Files asked for by files.getUploadURLExternal, and their bytes once uploaded. */
  const uploads = new Map<string, { filename: string; length: number; altText?: string; bytes?: Buffer }>();
  let baseUrl = "";

  const nextTs = () => {
    const now = BigInt(Date.now()) * 1000n;
    lastMicros = now > lastMicros ? now : lastMicros + 1n;
    const text = lastMicros.toString();
    return `${text.slice(0, -6)}.${text.slice(-6)}`;
  };

  const takeToken = (channel: string): boolean => {
    const limit = options.rateLimit;
    if (limit === undefined) return true;
    const now = performance.now();
    const bucket = buckets.get(channel) ?? { tokens: limit.burst, at: now };
    bucket.tokens = Math.min(limit.burst, bucket.tokens + (now - bucket.at) / limit.refillMs);
    bucket.at = now;
    buckets.set(channel, bucket);
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  };

  const handle = (method: string, params: Record<string, string>): { status: number; body: object; headers?: Record<string, string> } => {
    const channel = params.channel ?? "";
    if (options.channels !== undefined && "channel" in params && !options.channels.includes(channel)) {
      return ok({ ok: false, error: "channel_not_found" });
    }
    switch (method) {
      case "chat.postMessage": {
        if (!takeToken(channel)) {
          rateLimited += 1;
          const seconds = options.rateLimit?.retryAfterSeconds ?? 1;
          return { status: 429, body: { ok: false, error: "ratelimited" }, headers: { "retry-after": String(seconds) } };
        }
        const blocks = params.blocks === undefined ? undefined : (JSON.parse(params.blocks) as unknown);
        const problem = checkLimits(blocks);
        if (problem !== undefined) return ok({ ok: false, error: problem });
        if ((params.text ?? "") === "" && blocks === undefined) return ok({ ok: false, error: "no_text" });
        const threadTs = params.thread_ts;
        if (threadTs !== undefined && !(stored.get(channel) ?? []).some((message) => message.ts === threadTs)) {
          return ok({ ok: false, error: "thread_not_found" });
        }
        const message: StoredMessage = {
          ts: nextTs(),
          channel,
          text: params.text ?? "",
          blocks,
          ...(threadTs === undefined ? {} : { threadTs }),
          ...(params.metadata === undefined ? {} : { metadata: JSON.parse(params.metadata) as unknown }),
        };
        stored.set(channel, [...(stored.get(channel) ?? []), message]);
        return ok({ ok: true, channel, ts: message.ts, message: { text: message.text, ts: message.ts } });
      }
      case "chat.getPermalink": {
        const message = (stored.get(channel) ?? []).find((candidate) => candidate.ts === params.message_ts);
        if (message === undefined) return ok({ ok: false, error: "message_not_found" });
        const path = `https://fake-workspace.slack.com/archives/${channel}/p${message.ts.replace(".", "")}`;
        const permalink = message.threadTs === undefined ? path : `${path}?thread_ts=${message.threadTs}&cid=${channel}`;
        return ok({ ok: true, channel, permalink });
      }
      case "conversations.history":
      case "conversations.replies": {
        const oldest = Number(params.oldest ?? "0");
        const all = stored.get(channel) ?? [];
        const inScope =
          method === "conversations.history"
            ? all.filter((message) => message.threadTs === undefined)
            : all.filter((message) => message.ts === params.ts || message.threadTs === params.ts);
        if (method === "conversations.replies" && inScope.length === 0) return ok({ ok: false, error: "thread_not_found" });
        const withMetadata = params.include_all_metadata === "true";
        const found = inScope
          .filter((message) => Number(message.ts) >= oldest)
          .map((message) => ({
            type: "message",
            ts: message.ts,
            text: message.text,
            ...(message.threadTs === undefined ? {} : { thread_ts: message.threadTs }),
            ...(withMetadata && message.metadata !== undefined ? { metadata: message.metadata } : {}),
          }));
        // history answers newest first, replies oldest first (as Slack does).
        const ordered = method === "conversations.history" ? found.reverse() : found;
        return ok({ ok: true, messages: ordered.slice(0, Number(params.limit ?? "100")), has_more: false });
      }
      case "files.getUploadURLExternal": {
        const length = Number(params.length);
        if ((params.filename ?? "") === "") return ok({ ok: false, error: "invalid_arguments" });
        if (!Number.isInteger(length) || length <= 0) return ok({ ok: false, error: "invalid_arguments" });
        if ((params.alt_text ?? "").length > LIMITS.altTextChars) return ok({ ok: false, error: "alt_txt_too_large" });
        const fileId = `F${String(uploads.size + 1).padStart(10, "0")}`;
        uploads.set(fileId, { filename: params.filename ?? "", length, ...(params.alt_text === undefined ? {} : { altText: params.alt_text }) });
        return ok({ ok: true, upload_url: `${baseUrl}/upload/v1/${fileId}`, file_id: fileId });
      }
      case "files.completeUploadExternal": {
        let files: unknown;
        try {
          files = JSON.parse(params.files ?? "");
        } catch {
          return ok({ ok: false, error: "invalid_arguments" });
        }
        if (!Array.isArray(files) || files.length === 0) return ok({ ok: false, error: "invalid_arguments" });
        const shared: SharedFile[] = [];
        for (const file of files as Array<{ id?: unknown; title?: unknown }>) {
          const upload = typeof file.id === "string" ? uploads.get(file.id) : undefined;
          if (upload?.bytes === undefined || typeof file.id !== "string") return ok({ ok: false, error: "file_not_found" });
          shared.push({
            id: file.id,
            title: typeof file.title === "string" ? file.title : upload.filename,
            filename: upload.filename,
            bytes: upload.bytes,
            ...(upload.altText === undefined ? {} : { altText: upload.altText }),
          });
        }
        const channelId = params.channel_id;
        if (channelId !== undefined) {
          if (options.channels !== undefined && !options.channels.includes(channelId)) return ok({ ok: false, error: "channel_not_found" });
          const threadTs = params.thread_ts;
          if (threadTs !== undefined && !(stored.get(channelId) ?? []).some((message) => message.ts === threadTs)) {
            return ok({ ok: false, error: "thread_not_found" });
          }
          const message: StoredMessage = { ts: nextTs(), channel: channelId, text: params.initial_comment ?? "", blocks: undefined, files: shared, ...(threadTs === undefined ? {} : { threadTs }) };
          stored.set(channelId, [...(stored.get(channelId) ?? []), message]);
        }
        for (const file of shared) uploads.delete(file.id);
        return ok({ ok: true, files: shared.map((file) => ({ id: file.id, title: file.title })) });
      }
      default:
        return ok({ ok: false, error: "unknown_method" });
    }
  };

  /** The bytes POSTed to an upload URL, raw or as the one file part of a multipart form. */
  const readUpload = async (request: IncomingMessage, body: Buffer): Promise<Buffer | undefined> => {
    const type = request.headers["content-type"] ?? "";
    if (!type.startsWith("multipart/form-data")) return body;
    const form = await new Response(body, { headers: { "content-type": type } }).formData();
    const file = [...form.values()].find((value): value is File => typeof value !== "string");
    return file === undefined ? undefined : Buffer.from(await file.arrayBuffer());
  };

  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks);
      const upload = /^\/upload\/v1\/(F\d+)$/.exec(request.url ?? "");
      if (upload !== null) {
        // The upload URL is pre-authorized: no token, any content type.
        const pending = uploads.get(upload[1] ?? "");
        const bytes = request.method === "POST" ? await readUpload(request, body) : undefined;
        calls.push({ method: "upload", params: { fileId: upload[1] ?? "", bytes: String(bytes?.length ?? 0) }, authorization: request.headers.authorization });
        if (pending === undefined || bytes === undefined || bytes.length !== pending.length) {
          response.writeHead(400, { "content-type": "text/plain" });
          return response.end("upload refused");
        }
        pending.bytes = bytes;
        response.writeHead(200, { "content-type": "text/plain" });
        return response.end(`OK - ${bytes.length}`);
      }
      const method = (request.url ?? "").replace(/^\/api\//, "").split("?")[0] ?? "";
      const params = Object.fromEntries(new URLSearchParams(body.toString("utf8")));
      calls.push({ method, params, authorization: request.headers.authorization });
      const send = (status: number, body: object, headers: Record<string, string> = {}) => {
        response.writeHead(status, { "content-type": "application/json", ...headers });
        response.end(JSON.stringify(body));
      };
      if (request.method !== "POST") return send(405, { ok: false, error: "method_not_allowed" });
      if (request.headers.authorization !== `Bearer ${options.token}`) return send(200, { ok: false, error: "invalid_auth" });
      const behaviour = scripted.get(method)?.shift();
      if (behaviour !== undefined && "retryAfterSeconds" in behaviour) {
        return send(429, { ok: false, error: "ratelimited" }, { "retry-after": String(behaviour.retryAfterSeconds) });
      }
      if (behaviour !== undefined && "httpStatus" in behaviour) {
        response.writeHead(behaviour.httpStatus, { "content-type": "text/plain" });
        return response.end("upstream trouble");
      }
      if (behaviour !== undefined && "error" in behaviour) return send(200, { ok: false, error: behaviour.error });
      const answer = handle(method, params);
      if (behaviour !== undefined && "dropAfterHandling" in behaviour) return response.destroy();
      return send(answer.status, answer.body, answer.headers);
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the fake Slack has no TCP address");
  const { port } = address;
  baseUrl = `http://127.0.0.1:${port}`;
  return {
    apiUrl: `http://127.0.0.1:${port}/api/`,
    calls,
    messages: (channel) => stored.get(channel) ?? [],
    rateLimitedCount: () => rateLimited,
    failNext(method, behaviour) {
      scripted.set(method, [...(scripted.get(method) ?? []), behaviour]);
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        if (!server.listening) return resolve();
        server.closeAllConnections();
        server.close((error) => (error === undefined ? resolve() : reject(error)));
      }),
  };
}

function ok(body: object): { status: number; body: object } {
  return { status: 200, body };
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
