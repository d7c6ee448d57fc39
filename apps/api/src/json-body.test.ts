import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { AppError, statusOf } from "./errors.js";
import { jsonBodyReader } from "./json-body.js";

let server: Server | undefined;

afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

/** Posts raw bytes to a server that reads them with jsonBodyReader("1kb") and answers what it read. */
async function post(
  body: string | Buffer | readonly Buffer[],
  headers: Record<string, string> = { "content-type": "application/json" },
): Promise<{ status: number; body: unknown; connection: string | undefined }> {
  const read = jsonBodyReader("1kb");
  server = createServer((req, res) => {
    read(req).then(
      (value) => res.end(JSON.stringify({ value })),
      (error: unknown) => {
        if (!(error instanceof AppError)) throw error;
        res.writeHead(statusOf(error.code), error.headers).end(JSON.stringify({ error: error.detail }));
      },
    );
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const req = request({ port, method: "POST", path: "/", headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString()), connection: res.headers.connection }),
      );
    });
    req.on("error", reject);
    for (const part of Array.isArray(body) ? body : [body]) req.write(part);
    req.end();
  });
}

describe("jsonBodyReader", () => {
  it("reads a JSON object, also when it arrives in several chunks split inside a character", async () => {
    expect(await post('{"title":"Disk full on db-1"}')).toMatchObject({ status: 200, body: { value: { title: "Disk full on db-1" } } });
    const text = Buffer.from('{"title":"Zürich p99 ↑"}');
    const split = text.indexOf(Buffer.from("↑")) + 1;
    expect(await post([text.subarray(0, split), text.subarray(split)])).toMatchObject({ body: { value: { title: "Zürich p99 ↑" } } });
  });

  it("accepts charset=utf-8 and an empty body (an empty object, as express.json gives)", async () => {
    expect(await post("[1]", { "content-type": "application/json; charset=UTF-8" })).toMatchObject({ status: 200, body: { value: [1] } });
    expect(await post("", { "content-type": "application/json" })).toMatchObject({ status: 200, body: { value: {} } });
  });

  it.each([
    ["another media type", "text/plain", undefined, "Content-Type must be application/json"],
    ["another charset", "application/json; charset=utf-16le", undefined, 'Unsupported charset "utf-16le": send the JSON as UTF-8'],
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

  it("answers 413 over the limit, by Content-Length or while streaming, and closes the connection", async () => {
    const big = `{"details":"${"x".repeat(2_000)}"}`;
    expect(await post(big)).toMatchObject({ status: 413, body: { error: "Request body exceeds the limit of 1kb" }, connection: "close" });
    const chunked = await post([Buffer.from(big.slice(0, 900)), Buffer.from(big.slice(900))], {
      "content-type": "application/json",
      "transfer-encoding": "chunked",
    });
    expect(chunked).toMatchObject({ status: 413, connection: "close" });
  });
});
