import { setTimeout as sleep } from "node:timers/promises";
import { request } from "undici";
import type { CallBounds } from "../delivery/call-bounds.js";
import type { AttemptOutcome } from "../delivery/once-per-key.js";

export interface ToolRequest {
  /** The tool's name in reasons ("PagerDuty"). */
  tool: string;
  method: "GET" | "POST";
  url: string;
  headers: Record<string, string>;
  body?: unknown;
  /** The credential in the headers: never let it into a reason, whatever the tool echoes. */
  secret: string;
  timeoutMs: number;
}

export type ToolAnswer = { status: number; json: unknown };

/** Why a call failed, and whether it certainly did nothing (`certain`). Its message never holds the secret. */
export class ToolCallError extends Error {
  constructor(
    message: string,
    readonly certain: boolean,
  ) {
    super(message);
    this.name = "ToolCallError";
  }
}

const MAX_RATE_LIMITED_TRIES = 3;
const NOT_SENT_CODES = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "ENETUNREACH", "EHOSTUNREACH", "UND_ERR_CONNECT_TIMEOUT"]);

/**
 * One JSON call to an incident tool with undici, bounded by `timeoutMs` and the caller's signal; a 429
 * with `Retry-After` is waited out while it fits before the deadline. Any 2xx is returned with its body
 * (JSON, or undefined); every other outcome is a `ToolCallError` naming the status and the tool's own
 * message, the secret scrubbed.
 */
export async function callTool(call: ToolRequest, bounds: CallBounds): Promise<ToolAnswer> {
  for (let tries = 1; ; tries += 1) {
    if (bounds.signal?.aborted) throw new ToolCallError(`stopped before calling ${call.tool}`, true);
    const signal = bounds.signal === undefined ? AbortSignal.timeout(call.timeoutMs) : AbortSignal.any([bounds.signal, AbortSignal.timeout(call.timeoutMs)]);
    let status: number;
    let retryAfter: string | string[] | undefined;
    let json: unknown;
    try {
      const response = await request(call.url, {
        method: call.method,
        headers: { ...call.headers, ...(call.body === undefined ? {} : { "content-type": "application/json" }) },
        body: call.body === undefined ? null : JSON.stringify(call.body),
        signal,
      });
      status = response.statusCode;
      retryAfter = response.headers["retry-after"];
      const text = await response.body.text();
      json = parseJson(text);
    } catch (error) {
      const code = errorCode(error);
      if (code !== undefined && NOT_SENT_CODES.has(code)) throw new ToolCallError(`${call.tool} unreachable (${code})`, true);
      if (bounds.signal?.aborted) throw new ToolCallError(`stopped before ${call.tool} answered`, false);
      throw new ToolCallError(`${call.tool} did not answer${code === undefined ? "" : ` (${code})`}`, false);
    }
    if (status >= 200 && status < 300) return { status, json };
    const message = redact(`${call.tool} answered HTTP ${status}${toolMessage(json)}`, call.secret);
    if (status !== 429) throw new ToolCallError(message, status < 500 && status !== 408);
    const seconds = Number(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter);
    if (!Number.isFinite(seconds) || tries >= MAX_RATE_LIMITED_TRIES || Date.now() + seconds * 1000 > bounds.deadline) {
      throw new ToolCallError(`${message} (rate-limited, and the deadline leaves no time to wait)`, true);
    }
    try {
      await sleep(seconds * 1000, undefined, bounds.signal === undefined ? {} : { signal: bounds.signal });
    } catch {
      throw new ToolCallError(`stopped while waiting out ${call.tool}'s rate limit`, true);
    }
  }
}

/** A failed call as what a once-per-key try reports: nothing happened, or maybe it did. */
export function attemptFailure(error: unknown): AttemptOutcome<never> {
  if (error instanceof ToolCallError) return error.certain ? { notDone: error.message } : { unsure: error.message };
  return { unsure: error instanceof Error ? error.name : "unknown error" };
}

/** Scrubs every occurrence of the secret from `text` (one under 4 characters cannot be told from words). */
export function redact(text: string, secret: string): string {
  return secret.length < 4 ? text : text.split(secret).join("[redacted]");
}

function parseJson(text: string): unknown {
  if (text === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The tool's own explanation, short: PagerDuty answers `{error:{message,errors[]}}`, Opsgenie
 * `{message}`. Useful ("Incident Not Found") and safe once scrubbed of the secret.
 */
function toolMessage(json: unknown): string {
  if (typeof json !== "object" || json === null) return "";
  const nested = "error" in json && typeof json.error === "object" && json.error !== null ? json.error : json;
  const message = "message" in nested && typeof nested.message === "string" ? nested.message : undefined;
  const details = "errors" in nested && Array.isArray(nested.errors) ? nested.errors.filter((item): item is string => typeof item === "string") : [];
  const text = [message, ...details].filter((part) => part !== undefined && part !== "").join("; ");
  return text === "" ? "" : `: ${text.slice(0, 200)}`;
}

function errorCode(error: unknown): string | undefined {
  for (let current: unknown = error, depth = 0; current !== undefined && depth < 3; depth += 1) {
    if (typeof current !== "object" || current === null) return undefined;
    if ("code" in current && typeof current.code === "string") return current.code;
    current = "cause" in current ? current.cause : undefined;
  }
  return undefined;
}
