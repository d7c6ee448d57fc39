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
    const reply = decodeReply(encodeReply(jobId, result));
    expect(reply?.jobId).toBe(jobId);
    expect(reply?.result).toBeInstanceOf(JsonText);
    expect(JSON.parse(textOf(reply))).toEqual(result);
  });

  it("carry the version they are written in", () => {
    const text = encodeReply(jobId, { highlights: "x" });
    expect(text).toBe(`{"v":${WIRE_VERSION},"jobId":"${jobId}"}\n{"highlights":"x"}`);
    expect(decodeReply(text)?.version).toBe(WIRE_VERSION);
  });

  it("decode a reply of a newer worker, ignoring header fields they do not know", () => {
    const reply = decodeReply(`{"v":${WIRE_VERSION + 1},"jobId":"${jobId}","workerId":"w-7"}\n{"highlights":"x"}`);
    expect(reply).toMatchObject({ jobId, version: WIRE_VERSION + 1 });
  });

  it("carry a worker's refusal as status 400 and its issues, which decode back", () => {
    const issues = [{ path: ["messageLink"], message: "the Slack app is not a member of channel C1" }];
    const text = encodeReply(jobId, new RequestRefusal(issues));
    expect(text).toBe(`{"v":${WIRE_VERSION},"jobId":"${jobId}","status":400}\n{"error":${JSON.stringify(issues)}}`);
    const reply = decodeReply(text);
    expect(reply?.result).toBeInstanceOf(RequestRefusal);
    expect(reply?.result instanceof RequestRefusal ? reply.result.issues : undefined).toEqual(issues);
  });

  it.each([
    ["no newline", '{"highlights":"x"}'],
    ["no job id", '\n{"highlights":"x"}'],
    ["a header-less reply (job id, newline, result)", 'job-1\n{"highlights":"x"}'],
    ["a result that is not an object", '{"v":1,"jobId":"job-1"}\n[1,2]'],
    ["a truncated result", '{"v":1,"jobId":"job-1"}\n{"highlights":"x"'],
    ["the old JSON envelope", '{"jobId":"job-1","result":{}}'],
    ["a header that is not JSON", '{"v":1,"jobId":\n{"highlights":"x"}'],
    ["a header without a job id", '{"v":1}\n{"highlights":"x"}'],
    ["a header without a version", '{"jobId":"job-1"}\n{"highlights":"x"}'],
    ["a refusal without issues", '{"v":1,"jobId":"job-1","status":400}\n{"error":[]}'],
    ["a refusal whose issues are not issues", '{"v":1,"jobId":"job-1","status":400}\n{"error":"no"}'],
    ["a status other than 400", '{"v":1,"jobId":"job-1","status":500}\n{"highlights":"x"}'],
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
