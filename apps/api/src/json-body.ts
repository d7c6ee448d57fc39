import { isUtf8 } from "node:buffer";
import bytes from "bytes";
import express, { type Request, type Response } from "express";
import { AppError } from "./errors.js";

/** Deepest nesting of arrays and objects accepted in a body: the API's own bodies are four levels deep. */
export const MAX_JSON_DEPTH = 32;

/**
 * Reads a request's JSON body with `express.json()`: `application/json` in UTF-8, uncompressed, at most
 * `limit` (BODY_LIMIT, e.g. "1mb"), a JSON object or array (an empty body is `{}`). Answers 415 for another
 * media type, charset or content encoding, 413 over the limit, and 400 for malformed JSON (with the
 * parser's message), for bytes that are not UTF-8 and for nesting deeper than MAX_JSON_DEPTH.
 *
 * A function the route calls, rather than app-wide middleware, so that callers are authenticated before
 * a byte of their body is read.
 */
export function jsonBodyReader(limit: string): (req: Request, res: Response) => Promise<unknown> {
  const maxBytes = bytes.parse(limit);
  if (maxBytes === null) throw new RangeError(`invalid body limit "${limit}"`);
  const parse = express.json({ limit: maxBytes, inflate: false, strict: true, verify: checkBody });

  return async (req, res) => {
    // body-parser skips other media types (and leaves req.body unset); null is a request without a body.
    if (req.is("application/json") === false) {
      throw new AppError("unsupported_media_type", "Content-Type must be application/json");
    }
    // body-parser reads a body over the limit to its end before it answers: one that says it is too large
    // is answered at once, and the connection closed rather than read on.
    if (Number(req.headers["content-length"]) > maxBytes) throw tooLarge(limit);
    await new Promise<void>((resolve, reject) => {
      parse(req, res, (error?: unknown) => (error === undefined ? resolve() : reject(refusal(error, limit))));
    });
    const body: unknown = req.body;
    return body ?? {};
  };
}

const [BACKSLASH, QUOTE] = [0x5c, 0x22];
const [OPEN_BRACE, CLOSE_BRACE, OPEN_BRACKET, CLOSE_BRACKET] = [0x7b, 0x7d, 0x5b, 0x5d];

/**
 * Runs on the raw bytes before JSON.parse does (body-parser's `verify`): a 1 MB body of nested arrays
 * blocked the event loop for a quarter of a second in JSON.parse alone, so depth is counted first.
 */
function checkBody(_req: unknown, _res: unknown, body: Buffer, charset: string): void {
  // body-parser accepts any charset starting with "utf-" and decodes it; the API reads only UTF-8.
  if (charset !== "utf-8") throw unsupportedCharset(charset);
  // body-parser would decode invalid sequences to U+FFFD and carry on.
  if (!isUtf8(body)) throw new AppError("validation", "Request body is not valid UTF-8");
  // body-parser strips a UTF-8 byte order mark before parsing.
  let index = body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
  while (isJsonWhitespace(body[index])) index += 1;
  if (index < body.length && body[index] !== OPEN_BRACE && body[index] !== OPEN_BRACKET) {
    throw new AppError("validation", "Malformed JSON: the body must be a JSON object");
  }
  let depth = 0;
  let inString = false;
  for (; index < body.length; index += 1) {
    const byte = body[index];
    if (inString) {
      if (byte === BACKSLASH) index += 1;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) inString = true;
    else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      depth += 1;
      if (depth > MAX_JSON_DEPTH) throw new AppError("validation", `Malformed JSON: nested deeper than ${MAX_JSON_DEPTH} levels`);
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) depth -= 1;
  }
}

function isJsonWhitespace(byte: number | undefined): boolean {
  return byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d;
}

function tooLarge(limit: string): AppError {
  // The rest of the body is not read: the connection closes after the answer rather than carry it.
  return new AppError("payload_too_large", `Request body exceeds the limit of ${limit}`, { Connection: "close" });
}

function unsupportedCharset(charset: string): AppError {
  return new AppError("unsupported_media_type", `Unsupported charset "${charset}": send the JSON as UTF-8`);
}

/** body-parser's errors (http-errors with a `type`) as the API's answers; anything else stays a bug. */
function refusal(error: unknown, limit: string): unknown {
  if (error instanceof AppError || !(error instanceof Error) || !("type" in error)) return error;
  const detail = (name: string) => (name in error ? String(Reflect.get(error, name)) : "");
  switch (error.type) {
    case "entity.too.large":
      return tooLarge(limit);
    case "charset.unsupported":
      return unsupportedCharset(detail("charset"));
    case "encoding.unsupported":
      return new AppError("unsupported_media_type", `Unsupported Content-Encoding "${detail("encoding")}": send the JSON uncompressed`);
    case "entity.parse.failed":
      return new AppError("validation", `Malformed JSON: ${error.message}`);
    case "request.aborted":
    case "request.size.invalid":
      return new AppError("validation", "Request body was not received completely");
    default:
      return error;
  }
}
