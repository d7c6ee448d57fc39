/**
 * Property-based fuzzing of `POST /playbook/execution` and `POST /playbook/execution/batch` over a real
 * socket: arbitrary JSON, valid bodies mutated (wrong types, huge and unicode strings, deep nesting,
 * prototype keys, too many attributes), raw bytes (invalid UTF-8, truncated JSON) and odd content types
 * and encodings. Whatever comes in, the API answers, with JSON, without a 5xx (but the 503 of a queue the
 * test takes down), without internals, refuses what it must, and stays healthy.
 *
 * FUZZ_RUNS cases per route (default 2,000), from seed FUZZ_SEED (default fixed, so CI is repeatable;
 * a failure prints the seed and path that replay it).
 */
import { isUtf8 } from "node:buffer";
import { once } from "node:events";
import { Agent, request, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { ExecutionJob, JsonText, MAX_ATTRIBUTES, MessageExecutionJob } from "@pes/contracts";
import { createLogger } from "@pes/logger";
import { QueueUnavailableError, type ExecutionRequest, type MessageExecutionRequest } from "@pes/executions";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH } from "../json-body.js";
import { CANNED_RESULT, FakeExecutionClient, rsaKey, signToken, startJwksServer, testApp, type JwksServer } from "../testing/fixtures.js";

const RUNS = Number(process.env.FUZZ_RUNS ?? 2_000);
const SEED = Number(process.env.FUZZ_SEED ?? 20_240_501);
const BODY_LIMIT = 16 * 1024;
const BATCH_MAX_ITEMS = 5;
const REPO_ROOT = fileURLToPath(new URL("../../../..", import.meta.url));

/** Answers every execution with the canned result, or fails to enqueue while `down`; checks each job. */
class SwitchableExecutionClient extends FakeExecutionClient {
  down = false;
  /** Jobs the worker would refuse as malformed (it must be none). */
  readonly malformed: string[] = [];

  override async executeMany(requests: readonly (ExecutionRequest | MessageExecutionRequest)[], _timeoutMs: number): Promise<JsonText[]> {
    if (this.down) throw new QueueUnavailableError("Redis is unreachable");
    for (const request of requests) {
      const caller = { v: 1, replyTo: "api-fuzz", deadline: Date.now() + 60_000 };
      const job = "kind" in request ? MessageExecutionJob.safeParse({ ...request, ...caller }) : ExecutionJob.safeParse({ ...request, ...caller });
      if (!job.success) this.malformed.push(`${JSON.stringify(request)}: ${job.error.message}`);
    }
    return requests.map(() => JsonText.of(CANNED_RESULT));
  }

  override async isReady(): Promise<boolean> {
    return !this.down;
  }
}

const key = rsaKey("fuzz-key");
const token = signToken({ key, expiresIn: 3_600 });
const client = new SwitchableExecutionClient();
/** Only error lines: a 500 is logged as "unhandled error" with its cause, which a failure then shows. */
const errorLog: string[] = [];
let jwks: JwksServer;
let server: Server;
let port: number;
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

beforeAll(async () => {
  jwks = await startJwksServer([key.jwk]);
  const logger = createLogger({
    name: "api-fuzz",
    level: "error",
    destination: new Writable({
      write: (chunk: Buffer | string, _encoding, callback) => {
        errorLog.push(chunk.toString());
        callback();
      },
    }),
  });
  const { app } = testApp({
    jwksUrl: jwks.url,
    executionClient: client,
    logger,
    limits: { bodyLimit: "16kb", batchMaxItems: BATCH_MAX_ITEMS },
  });
  server = app.listen(0, "127.0.0.1");
  await once(server, "listening");
  ({ port } = server.address() as AddressInfo);
});

afterAll(async () => {
  agent.destroy();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await jwks.close();
});

interface FuzzRequest {
  contentType: string | undefined;
  contentEncoding: string | undefined;
  /** Content-Length, or chunked. */
  chunked: boolean;
  body: Buffer;
  queueDown: boolean;
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** Sends one request; rejects when no answer comes within 10 s (a hang, not a slow answer). */
function send(path: string, fuzz: FuzzRequest): Promise<Answer> {
  const headers: Record<string, string> = { Authorization: `Bearer ${token}` };
  if (fuzz.contentType !== undefined) headers["Content-Type"] = fuzz.contentType;
  if (fuzz.contentEncoding !== undefined) headers["Content-Encoding"] = fuzz.contentEncoding;
  if (!fuzz.chunked) headers["Content-Length"] = String(fuzz.body.length);
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, method: "POST", path, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString() }));
      res.on("error", reject);
    });
    req.setTimeout(10_000, () => req.destroy(new Error(`no answer within 10 s to ${describeRequest(fuzz)}`)));
    req.on("error", reject);
    req.end(fuzz.body);
  });
}

function describeRequest(fuzz: FuzzRequest): string {
  const shown = fuzz.body.length > 300 ? `${fuzz.body.subarray(0, 300).toString("latin1")}… (${fuzz.body.length} bytes)` : fuzz.body.toString("latin1");
  return `${JSON.stringify({ ...fuzz, body: shown })}`;
}

// ---- Bodies ----------------------------------------------------------------------------------------

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const link = "https://acme.slack.com/archives/C123/p1700000000123456";
const validInputs: Json[] = [
  { bookName: "disk-full" },
  { bookName: "checkout-latency", attributes: { service: "checkout" }, time: "2024-04-30T10:00:00Z", liveRun: true, channelId: "C1" },
  { title: "High latency on checkout in prod", time: "2024-04-30T10:00:00+02:00", details: "p99 up" },
  { messageLink: link, bookName: "disk-full" },
  { title: "Disk full on db-1", time: "2024-04-30T10:00:00Z", attributes: { host: "db-1", region: "eu-west-1" } },
];
const validBatches: Json[] = [
  { inputList: [validInputs[0] ?? null] },
  { inputList: validInputs, liveRun: false, channelId: "C-ALL" },
  { inputList: [validInputs[2] ?? null, validInputs[3] ?? null], liveRun: true },
];

/** Links the API must refuse before anything would fetch them. */
const hostileLinks = [
  "https://..slack.com/archives/C123/p1700000000123456",
  "https://a..slack.com/archives/C123/p1700000000123456",
  "https://%2e.slack.com/archives/C123/p1700000000123456",
  "https://.slack.com/archives/C123/p1700000000123456",
  "https://acme.slack.com/archives/C123/p9999999999999999",
  "https://acme.slack.com/archives/C123/p0000000001000000",
  "https://x.slack.com@evil.com/archives/C123/p1700000000123456",
  "https://evil.com/x.slack.com/archives/C123/p1700000000123456",
  "https://acme.slack.com:8443/archives/C123/p1700000000123456",
  "http://acme.slack.com/archives/C123/p1700000000123456",
  "javascript:alert(1)//acme.slack.com",
];

/** Keys that name Object.prototype's members or would set a prototype if assigned naively. */
const prototypeKeys = ["__proto__", "constructor", "prototype", "toString", "hasOwnProperty", "valueOf", "__defineGetter__", "then"];

/** Every path to a value inside `value`: [] is the value itself. */
function pathsOf(value: Json, prefix: (string | number)[] = []): (string | number)[][] {
  const paths = [prefix];
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) paths.push(...pathsOf(item, [...prefix, index]));
  } else if (value !== null && typeof value === "object") {
    for (const [name, child] of Object.entries(value)) paths.push(...pathsOf(child, [...prefix, name]));
  }
  return paths;
}

/** A copy of `value` with the value at `path` replaced by what `change` makes of it (undefined deletes). */
function update(value: Json, path: readonly (string | number)[], change: (old: Json) => Json | undefined): Json | undefined {
  const [head, ...rest] = path;
  if (head === undefined) return change(value);
  if (Array.isArray(value) && typeof head === "number") {
    const copy = [...value];
    const next = update(copy[head] ?? null, rest, change);
    if (next === undefined) copy.splice(head, 1);
    else copy[head] = next;
    return copy;
  }
  if (value !== null && typeof value === "object" && !Array.isArray(value) && typeof head === "string") {
    // Object.entries/fromEntries: a "__proto__" key stays an own property, as JSON.parse makes it.
    const entries = Object.entries(value).flatMap(([name, child]): [string, Json][] => {
      if (name !== head) return [[name, child]];
      const next = update(child, rest, change);
      return next === undefined ? [] : [[name, next]];
    });
    return Object.fromEntries(entries);
  }
  return value;
}

function nest(value: Json, depth: number, inObjects: boolean): Json {
  let nested = value;
  for (let level = 0; level < depth; level += 1) nested = inObjects ? { a: nested } : [nested];
  return nested;
}

/** A JSON value that breaks a body somewhere: what replaces the value found at a path. */
const replacement: fc.Arbitrary<(old: Json) => Json | undefined> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }).map((value) => () => value as Json),
  fc.constantFrom<Json>(null, true, false, 0, -1, 1e308, -0.5, "", "   ", [], {}, "2024-13-45T99:99:99Z", "x".repeat(257)).map((value) => () => value),
  // Valid date-times an offset carries outside the years a job's UTC time can be written in.
  fc.constantFrom<Json>("0000-01-01T00:00:00+23:59", "9999-12-31T23:59:59-23:59").map((value) => () => value),
  fc.constantFrom(...hostileLinks).map((value) => () => value),
  fc.integer({ min: 1_000, max: 20_000 }).map((length) => () => "é".repeat(length)),
  fc.string({ unit: "binary", maxLength: 300 }).map((text) => () => text),
  fc.string({ unit: "grapheme", maxLength: 100 }).map((text) => () => text),
  fc.record({ depth: fc.integer({ min: 1, max: 60 }), inObjects: fc.boolean() }).map(
    ({ depth, inObjects }) =>
      (old: Json) =>
        nest(old, depth, inObjects),
  ),
  fc.constant(() => undefined),
  fc.record({ name: fc.oneof(fc.constantFrom(...prototypeKeys), fc.string({ maxLength: 20 })), value: fc.jsonValue({ maxDepth: 2 }) }).map(
    ({ name, value }) =>
      (old: Json) =>
        old !== null && typeof old === "object" && !Array.isArray(old) ? Object.fromEntries([...Object.entries(old), [name, value as Json]]) : old,
  ),
  fc.record({ count: fc.integer({ min: MAX_ATTRIBUTES - 2, max: 300 }), name: fc.constantFrom(...prototypeKeys, "k") }).map(
    ({ count, name }) =>
      () =>
        Object.fromEntries(Array.from({ length: count }, (_, index) => [index === 0 ? name : `${name}${index}`, "v"])),
  ),
);

/** A valid body with one value (anywhere in it) replaced, deleted, nested or given extra keys. */
function mutatedBody(samples: readonly Json[]): fc.Arbitrary<Buffer> {
  return fc
    .constantFrom(...samples)
    .chain((sample) => fc.tuple(fc.constant(sample), fc.constantFrom(...pathsOf(sample)), replacement))
    .map(([sample, path, change]) => Buffer.from(JSON.stringify(update(sample, path, change) ?? null)));
}

/** A valid body's text broken as bytes: truncated, a byte inserted or overwritten, keys duplicated. */
function brokenText(samples: readonly Json[]): fc.Arbitrary<Buffer> {
  return fc
    .record({ sample: fc.constantFrom(...samples), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }), how: fc.nat(4) })
    .map(({ sample, at, byte, how }) => {
      const text = Buffer.from(JSON.stringify(sample));
      const index = at % (text.length + 1);
      switch (how) {
        case 0:
          return text.subarray(0, index);
        case 1:
          return Buffer.concat([text.subarray(0, index), Buffer.from([byte]), text.subarray(index)]);
        case 2:
          return Buffer.concat([text.subarray(0, index), Buffer.from([byte]), text.subarray(index + 1)]);
        case 3:
          return Buffer.from(`{"bookName":1,${text.subarray(1).toString()}`);
        default:
          return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf, 0x20, 0x0a]), text]);
      }
    });
}

function bodies(samples: readonly Json[]): fc.Arbitrary<Buffer> {
  return fc.oneof(
    { weight: 4, arbitrary: mutatedBody(samples) },
    { weight: 2, arbitrary: brokenText(samples) },
    { weight: 1, arbitrary: fc.constantFrom(...samples).map((sample) => Buffer.from(JSON.stringify(sample))) },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 4, stringUnit: "binary" }).map((value) => Buffer.from(JSON.stringify(value) ?? "")) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 2_000 }).map((bytes) => Buffer.from(bytes)) },
    {
      weight: 1,
      arbitrary: fc.integer({ min: MAX_JSON_DEPTH - 2, max: 5_000 }).map((depth) => Buffer.from(`${"[".repeat(depth)}${"]".repeat(depth)}`)),
    },
  );
}

const contentTypes = fc.oneof(
  { weight: 8, arbitrary: fc.constant("application/json") },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      undefined,
      "",
      "application/json; charset=utf-8",
      'application/json; charset="UTF-8"',
      "APPLICATION/JSON",
      "application/json;;",
      "application/json; charset=",
      "application/json; charset=utf8",
      "application/json; charset=utf-16le",
      "application/json; charset=latin1",
      "application/json; charset=x-unknown",
      "application/json, text/plain",
      "application/vnd.api+json",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "text/plain",
      "*/*",
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
);

const contentEncodings = fc.oneof(
  { weight: 8, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.constantFrom("identity", "", "gzip", "deflate", "br", "zstd", "x-custom", "gzip, identity") },
);

function requests(samples: readonly Json[]): fc.Arbitrary<FuzzRequest> {
  return fc.record({
    contentType: contentTypes,
    contentEncoding: contentEncodings,
    chunked: fc.boolean(),
    body: bodies(samples),
    queueDown: fc.oneof({ weight: 9, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  });
}

// ---- Oracle ----------------------------------------------------------------------------------------

/** Nesting depth of a parsed JSON value. */
function depthOf(value: unknown): number {
  if (Array.isArray(value)) return 1 + Math.max(0, ...value.map(depthOf));
  if (value !== null && typeof value === "object") return 1 + Math.max(0, ...Object.values(value).map(depthOf));
  return 0;
}

function parsedOrUndefined(body: Buffer): unknown {
  try {
    // body-parser strips a byte order mark; JSON.parse does not.
    return JSON.parse(body.toString().replace(/^\uFEFF/, ""));
  } catch {
    return undefined;
  }
}

/** An input the API must refuse whatever else it holds: too many attributes, or a hostile message link. */
function mustBeRefused(input: unknown): boolean {
  if (typeof input !== "object" || input === null) return false;
  const attributes = "attributes" in input ? input.attributes : undefined;
  if (typeof attributes === "object" && attributes !== null && Object.keys(attributes).length > MAX_ATTRIBUTES) return true;
  return "messageLink" in input && typeof input.messageLink === "string" && hostileLinks.includes(input.messageLink);
}

/** A non-empty list of `{ path: string[], message: string }`, as a 400 carries. */
const isIssueList = (value: unknown): boolean =>
  Array.isArray(value) &&
  value.length > 0 &&
  value.every(
    (item: unknown) =>
      typeof item === "object" &&
      item !== null &&
      "path" in item &&
      Array.isArray(item.path) &&
      item.path.every((segment: unknown) => typeof segment === "string") &&
      "message" in item &&
      typeof item.message === "string",
  );

/** What every answer must satisfy, whatever was sent. */
function checkAnswer(path: string, fuzz: FuzzRequest, answer: Answer): void {
  const context = `${answer.status} ${answer.text.slice(0, 500)} for ${describeRequest(fuzz)}; errors logged: ${errorLog.join("").slice(0, 2_000)}`;
  const allowed = [200, 400, 413, 415, ...(fuzz.queueDown ? [503] : [])];
  expect(allowed, context).toContain(answer.status);
  expect(answer.headers["content-type"], context).toBe("application/json; charset=utf-8");
  const body: unknown = JSON.parse(answer.text);
  // No stack trace, no file of ours, whatever the caller's text echoed back around it.
  expect(answer.text, context).not.toContain(REPO_ROOT);
  expect(answer.text, context).not.toMatch(/node_modules|(\\n|\n)\s+at |\(\S+:\d+:\d+\)/);

  if (answer.status >= 400) {
    expect(typeof body === "object" && body !== null && "error" in body, context).toBe(true);
    const error = typeof body === "object" && body !== null && "error" in body ? body.error : undefined;
    expect(typeof error === "string" || isIssueList(error), context).toBe(true);
    return;
  }

  // A 200 means the body was JSON the API must take: UTF-8, not too deep, within the limit.
  expect(fuzz.body.length <= BODY_LIMIT && (fuzz.body.length === 0 || isUtf8(fuzz.body)), context).toBe(true);
  const parsed = parsedOrUndefined(fuzz.body);
  expect(depthOf(parsed), context).toBeLessThanOrEqual(MAX_JSON_DEPTH);
  if (path === "/playbook/execution") {
    expect(mustBeRefused(parsed), context).toBe(false);
    expect(body, context).toEqual(CANNED_RESULT);
    return;
  }
  const inputs: unknown = typeof parsed === "object" && parsed !== null && "inputList" in parsed ? parsed.inputList : undefined;
  if (!Array.isArray(body) || !Array.isArray(inputs) || body.length !== inputs.length) {
    throw new Error(`a batch answer must hold one result per input: ${context}`);
  }
  body.forEach((result: unknown, index) => {
    const isError = typeof result === "object" && result !== null && "error" in result && typeof result.error === "string";
    expect(isError || JSON.stringify(result) === JSON.stringify(CANNED_RESULT), context).toBe(true);
    if (mustBeRefused(inputs[index])) expect(isError, `item ${index}: ${context}`).toBe(true);
  });
}

async function expectHealthy(path: string, body: Json): Promise<void> {
  client.down = false;
  const answer = await send(path, {
    contentType: "application/json",
    contentEncoding: undefined,
    chunked: false,
    body: Buffer.from(JSON.stringify(body)),
    queueDown: false,
  });
  expect(answer.status, answer.text).toBe(200);
}

describe.each([
  ["/playbook/execution", validInputs],
  ["/playbook/execution/batch", validBatches],
])("fuzzing POST %s", (path, samples) => {
  it(
    `answers ${RUNS} hostile requests with JSON and no 5xx, and stays healthy`,
    async () => {
      await fc.assert(
        fc.asyncProperty(requests(samples), async (fuzz) => {
          client.down = fuzz.queueDown;
          errorLog.length = 0;
          checkAnswer(path, fuzz, await send(path, fuzz));
        }),
        { numRuns: RUNS, seed: SEED },
      );
      expect(client.malformed).toEqual([]);
      await expectHealthy(path, samples[1] ?? null);
    },
    Math.max(120_000, RUNS * 30),
  );
});
