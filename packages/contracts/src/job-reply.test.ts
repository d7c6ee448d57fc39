import { describe, expect, it } from "vitest";
import { WIRE_VERSION } from "./execution-job.js";
import { decodeReply, encodeReply, RequestRefusal, type DecodedReply } from "./job-reply.js";
import { JsonText } from "./json-text.js";

const jobId = "3f1c2a9e-0d4b-4e8a-9a51-0c6f7e2b1d11";

/** The result's JSON text; fails on a refusal. */
function textOf(reply: DecodedReply | undefined): string {
  if (!(reply?.result instanceof JsonText)) throw new Error(`expected a result, got ${JSON.stringify(reply)}`);
  return reply.result.text;
}

describe("execution replies", () => {
  it("carry the job id and the result's JSON, which decodes back without being parsed", () => {
    const result = { highlights: "p99 latency 4× its level\nsince 13:43", actionResults: [{ title: "p99", shortAnswer: "1.9 s" }] };
    const reply = decodeReply(encodeReply(jobId, result, WIRE_VERSION));
    expect(reply?.jobId).toBe(jobId);
    expect(reply?.result).toBeInstanceOf(JsonText);
    expect(JSON.parse(textOf(reply))).toEqual(result);
  });

  it("carry the version they are written in", () => {
    const text = encodeReply(jobId, { highlights: "x" }, WIRE_VERSION);
    expect(text).toBe(`{"v":${WIRE_VERSION},"jobId":"${jobId}"}\n{"highlights":"x"}`);
    expect(decodeReply(text)?.version).toBe(WIRE_VERSION);
  });

  it("answer a job from before versioning in that time's format, which its API reads", () => {
    const text = encodeReply(jobId, { highlights: "x" }, undefined);
    expect(text).toBe(`${jobId}\n{"highlights":"x"}`);
  });

  it("answer a job from a newer API in the newest format this version writes", () => {
    expect(decodeReply(encodeReply(jobId, {}, WIRE_VERSION + 1))?.version).toBe(WIRE_VERSION);
  });

  it("decode a reply in the unversioned format of a worker of the previous version", () => {
    // Byte for byte what those workers publish.
    const reply = decodeReply(`${jobId}\n{"highlights":"from an old worker"}`);
    expect(reply).toMatchObject({ jobId, version: 0 });
    expect(textOf(reply)).toBe('{"highlights":"from an old worker"}');
  });

  it("decode a reply of a newer worker, ignoring header fields they do not know", () => {
    const reply = decodeReply(`{"v":${WIRE_VERSION + 1},"jobId":"${jobId}","workerId":"w-7"}\n{"highlights":"x"}`);
    expect(reply).toMatchObject({ jobId, version: WIRE_VERSION + 1 });
  });

  it("carry a worker's refusal as status 400 and its issues, which decode back", () => {
    const issues = [{ path: ["messageLink"], message: "the Slack app is not a member of channel C1" }];
    const text = encodeReply(jobId, new RequestRefusal(issues), WIRE_VERSION);
    expect(text).toBe(`{"v":${WIRE_VERSION},"jobId":"${jobId}","status":400}\n{"error":${JSON.stringify(issues)}}`);
    const reply = decodeReply(text);
    expect(reply?.result).toBeInstanceOf(RequestRefusal);
    expect(reply?.result instanceof RequestRefusal ? reply.result.issues : undefined).toEqual(issues);
  });

  it("give a sender of version 1 a refusal as a result it reads: { error } naming the field", () => {
    const refusal = new RequestRefusal([{ path: ["messageLink"], message: "no such message" }, { path: ["bookName"], message: "unknown" }]);
    expect(encodeReply(jobId, refusal, 1)).toBe(`{"v":1,"jobId":"${jobId}"}\n{"error":"messageLink: no such message; bookName: unknown"}`);
    expect(encodeReply(jobId, refusal, undefined)).toBe(`${jobId}\n{"error":"messageLink: no such message; bookName: unknown"}`);
  });

  it.each([
    ["no newline", '{"highlights":"x"}'],
    ["no job id", '\n{"highlights":"x"}'],
    ["a result that is not an object", "job-1\n[1,2]"],
    ["a truncated result", 'job-1\n{"highlights":"x"'],
    ["the old JSON envelope", '{"jobId":"job-1","result":{}}'],
    ["a header that is not JSON", '{"v":1,"jobId":\n{"highlights":"x"}'],
    ["a header without a job id", '{"v":1}\n{"highlights":"x"}'],
    ["a header without a version", '{"jobId":"job-1"}\n{"highlights":"x"}'],
    ["a refusal without issues", '{"v":2,"jobId":"job-1","status":400}\n{"error":[]}'],
    ["a refusal whose issues are not issues", '{"v":2,"jobId":"job-1","status":400}\n{"error":"no"}'],
    ["a status other than 400", '{"v":2,"jobId":"job-1","status":500}\n{"highlights":"x"}'],
  ])("refuses %s", (_case, text) => {
    expect(decodeReply(text)).toBeUndefined();
  });
});

describe("JsonText", () => {
  it("joins items into a JSON array as they are", () => {
    const items = [JsonText.of({ highlights: "a" }), new JsonText('{"error":"b"}')];
    expect(JSON.parse(JsonText.array(items).text)).toEqual([{ highlights: "a" }, { error: "b" }]);
    expect(JsonText.array([]).text).toBe("[]");
  });
});
