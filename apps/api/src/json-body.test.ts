import { once } from "node:events";
import { request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createLogger } from "@pes/logger";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorMiddleware } from "./errors.js";
import { jsonBodyReader, MAX_JSON_DEPTH } from "./json-body.js";
import { sendJson } from "./json-response.js";

let server: Server;
let port: number;

beforeAll(async () => {
  // An app that reads bodies with jsonBodyReader("1kb") and answers what it read, errors as the API does.
  const app = express();
  const read = jsonBodyReader("1kb");
  app.post("/", async (req, res) => sendJson(res, 200, { value: await read(req, res) }));
  app.use(errorMiddleware(createLogger({ name: "json-body-test", level: "silent" })));
  server = app.listen(0, "127.0.0.1");
  await once(server, "listening");
  ({ port } = server.address() as AddressInfo);
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** Posts raw bytes, in the given parts, over a socket of its own. */
async function post(
  body: string | Buffer | readonly Buffer[],
  headers: Record<string, string> = { "content-type": "application/json" },
): Promise<{ status: number; body: unknown; connection: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request({ port, method: "POST", path: "/", headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString()), connection: res.headers.connection }));
    });
    req.on("error", reject);
    for (const part of Array.isArray(body) ? body : [body]) req.write(part);
    req.end();
  });
}

const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;

describe("jsonBodyReader", () => {
  it("reads a JSON object, also when it arrives in several chunks split inside a character", async () => {
    expect(await post('{"title":"Disk full on db-1"}')).toMatchObject({ status: 200, body: { value: { title: "Disk full on db-1" } } });
    const text = Buffer.from('{"title":"Zürich p99 ↑"}');
    const split = text.indexOf(Buffer.from("↑")) + 1;
    expect(await post([text.subarray(0, split), text.subarray(split)])).toMatchObject({ body: { value: { title: "Zürich p99 ↑" } } });
  });

  it("accepts charset=utf-8, a byte order mark and an empty body (an empty object, as express.json gives)", async () => {
    expect(await post("[1]", { "content-type": "application/json; charset=UTF-8" })).toMatchObject({ status: 200, body: { value: [1] } });
    expect(await post(Buffer.from('\uFEFF {"a":1}'))).toMatchObject({ status: 200, body: { value: { a: 1 } } });
    expect(await post("", { "content-type": "application/json" })).toMatchObject({ status: 200, body: { value: {} } });
  });

  it.each([
    ["another media type", "text/plain", undefined, "Content-Type must be application/json"],
    ["a media type that only starts like JSON's", "application/json-seq", undefined, "Content-Type must be application/json"],
    ["a UTF-16 charset", "application/json; charset=utf-16le", undefined, 'Unsupported charset "utf-16le": send the JSON as UTF-8'],
    ["a charset other than UTF-*", "application/json; charset=latin1", undefined, 'Unsupported charset "latin1": send the JSON as UTF-8'],
    ["a compressed body", "application/json", "gzip", 'Unsupported Content-Encoding "gzip": send the JSON uncompressed'],
  ])("answers 415 for %s", async (_case, contentType, encoding, message) => {
    const headers: Record<string, string> = { "content-type": contentType };
    if (encoding !== undefined) headers["content-encoding"] = encoding;
    expect(await post("{}", headers)).toMatchObject({ status: 415, body: { error: message } });
  });

  it("answers 400 with the parser's message for malformed JSON and for a bare value", async () => {
    expect(await post('{"title": ')).toMatchObject({ status: 400, body: { error: expect.stringMatching(/^Malformed JSON: /) } });
    expect(await post('"just a string"')).toMatchObject({
      status: 400,
      body: { error: "Malformed JSON: the body must be a JSON object" },
    });
  });

  it.each([
    ["a lone continuation byte", Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0x80, 0x22, 0x7d])],
    ["an overlong encoding of /", Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}')])],
    ["a UTF-16 surrogate encoded in UTF-8", Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')])],
    ["a character cut short at the end", Buffer.concat([Buffer.from('{"a":"x"}'), Buffer.from("€").subarray(0, 2)])],
  ])("answers 400 for a body that is not UTF-8: %s", async (_case, body) => {
    expect(await post(body)).toMatchObject({ status: 400, body: { error: "Request body is not valid UTF-8" } });
  });

  it(`reads ${MAX_JSON_DEPTH} levels of nesting and refuses one more before parsing`, async () => {
    expect(await post(nested(MAX_JSON_DEPTH))).toMatchObject({ status: 200 });
    const refused = { status: 400, body: { error: `Malformed JSON: nested deeper than ${MAX_JSON_DEPTH} levels` } };
    expect(await post(nested(MAX_JSON_DEPTH + 1))).toMatchObject(refused);
    // Unclosed, and in objects: JSON.parse would have walked all of it before failing.
    expect(await post("[".repeat(900))).toMatchObject(refused);
    expect(await post(`${'{"a":'.repeat(40)}1${"}".repeat(40)}`)).toMatchObject(refused);
  });

  it("does not count brackets inside strings, escaped quotes included", async () => {
    const text = `{"a":"${"[".repeat(100)}\\"${"{".repeat(100)}","b":[["\\\\"]]}`;
    expect(await post(text)).toMatchObject({ status: 200, body: { value: { a: `${"[".repeat(100)}"${"{".repeat(100)}`, b: [["\\"]] } } });
  });

  it("answers 413 over the limit, by Content-Length or while streaming, and closes the connection", async () => {
    const big = `{"details":"${"x".repeat(2_000)}"}`;
    expect(await post(big)).toMatchObject({ status: 413, body: { error: "Request body exceeds the limit of 1kb" }, connection: "close" });
    const chunked = await post([Buffer.from(big.slice(0, 900)), Buffer.from(big.slice(900))], {
      "content-type": "application/json",
      "transfer-encoding": "chunked",
    });
    expect(chunked).toMatchObject({ status: 413, body: { error: "Request body exceeds the limit of 1kb" }, connection: "close" });
  });
});
