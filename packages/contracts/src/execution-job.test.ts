import { describe, expect, it } from "vitest";
import { decodeReply, encodeReply } from "./execution-job.js";
import { JsonText } from "./json-text.js";

describe("execution replies", () => {
  it("carry the job id and the result's JSON, which decodes back without being parsed", () => {
    const result = { highlights: "p99 latency 4× its level\nsince 13:43", actionResults: [{ title: "p99", shortAnswer: "1.9 s" }] };
    const reply = decodeReply(encodeReply("3f1c2a9e-0d4b-4e8a-9a51-0c6f7e2b1d11", result));
    expect(reply?.jobId).toBe("3f1c2a9e-0d4b-4e8a-9a51-0c6f7e2b1d11");
    expect(reply?.result).toBeInstanceOf(JsonText);
    expect(JSON.parse(reply?.result.text ?? "")).toEqual(result);
  });

  it.each([
    ["no newline", '{"highlights":"x"}'],
    ["no job id", '\n{"highlights":"x"}'],
    ["a result that is not an object", "job-1\n[1,2]"],
    ["a truncated result", 'job-1\n{"highlights":"x"'],
    ["the old JSON envelope", '{"jobId":"job-1","result":{}}'],
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
