import { describe, expect, it } from "vitest";
import { BatchExecutionInput, MAX_ATTRIBUTES, PlaybookExecutionInput } from "./execution-input.js";
import { ExecutionJob } from "./execution-job.js";

const time = "2026-11-20T14:05:00Z";
const link = "https://acme.slack.com/archives/C0123ABCD/p1700000000123456";

/** Issues as [path joined by ".", message] pairs, for compact tables. */
function issuesOf(input: unknown): [string, string][] {
  const parsed = PlaybookExecutionInput.safeParse(input);
  return parsed.success ? [] : parsed.error.issues.map((issue) => [issue.path.join("."), issue.message]);
}

describe("PlaybookExecutionInput accepts each variant of the spec", () => {
  it.each([
    ["BookNameInput without time (time defaults to now)", { bookName: "checkout-latency" }],
    ["BookNameInput with time", { bookName: "checkout-latency", time }],
    ["MessageLinkInput", { messageLink: link }],
    ["MessageLinkInput with bookName", { messageLink: link, bookName: "checkout-latency" }],
    ["AlertDetailsInput with title and time", { title: "High latency on checkout in prod", time }],
    ["AlertDetailsInput with bookName, no time", { bookName: "x", title: "t", attributes: { a: "b" }, details: "d" }],
    ["common fields", { bookName: "x", liveRun: true, channelId: "C0123" }],
    ["a time with an offset", { title: "t", time: "2026-11-20T16:05:00+02:00" }],
    ["fractional seconds", { title: "t", time: "2026-11-20T14:05:00.123Z" }],
  ])("%s", (_name, input) => {
    expect(issuesOf(input)).toEqual([]);
  });
});

describe("PlaybookExecutionInput rules", () => {
  it.each<[string, unknown, [string, RegExp][]]>([
    ["rule 1: nothing identifies the playbook", {}, [["bookName", /One of bookName, messageLink or title/]]],
    ["rule 1: only common fields", { liveRun: true, channelId: "C1" }, [["bookName", /One of bookName, messageLink or title/]]],
    ["rule 2: a title without time", { title: "t" }, [["time", /time is required when neither bookName nor messageLink/]]],
    ["rule 2: title and attributes without time", { title: "t", attributes: { a: "b" } }, [["time", /time is required/]]],
    ["rule 3: time without offset", { title: "t", time: "2026-11-20T14:05:00" }, [["time", /ISO 8601 date-time with a Z or an offset/]]],
    ["rule 3: time as a date only", { bookName: "x", time: "2026-11-20" }, [["time", /ISO 8601/]]],
    ["rule 3: time as words", { bookName: "x", time: "yesterday" }, [["time", /ISO 8601/]]],
    ["rule 3: time as a number", { bookName: "x", time: 1700000000 }, [["time", /ISO 8601/]]],
    ["rule 3: attribute value not a string", { bookName: "x", attributes: { port: 8080 } }, [["attributes.port", /expected string/]]],
    ["rule 3: attributes not an object", { bookName: "x", attributes: ["a"] }, [["attributes", /expected record/]]],
    ["rule 3: liveRun not a boolean", { bookName: "x", liveRun: "true" }, [["liveRun", /expected boolean/]]],
    ["rule 3: messageLink over http", { messageLink: "http://acme.slack.com/archives/C1/p1700000000123456" }, [["messageLink", /absolute https URL/]]],
    ["rule 3: messageLink not a URL", { messageLink: "slack message 42" }, [["messageLink", /absolute https URL/]]],
    ["rule 3: an unknown field", { bookName: "x", bookname: "y" }, [["", /Unrecognized key: "bookname"/]]],
    ["rule 3: empty bookName", { bookName: "  " }, [["bookName", /bookName must not be empty/]]],
    ["empty title", { title: "", time }, [["title", /title must not be empty/]]],
    ["empty channelId", { bookName: "x", channelId: "" }, [["channelId", /channelId must not be empty/]]],
    [
      "messageLink carries its own details",
      { messageLink: link, title: "t", time },
      [
        ["title", /cannot be combined with messageLink/],
        ["time", /cannot be combined with messageLink/],
      ],
    ],
  ])("%s", (_name, input, expected) => {
    const issues = issuesOf(input);
    expect(issues).toHaveLength(expected.length);
    expected.forEach(([path, message], index) => {
      expect(issues[index]?.[0]).toBe(path);
      expect(issues[index]?.[1]).toMatch(message);
    });
  });

  it("accepts up to 64 attributes and 16 KiB of their keys and values", () => {
    const many = Object.fromEntries(Array.from({ length: MAX_ATTRIBUTES }, (_, index) => [`k${index}`, "v"]));
    expect(issuesOf({ bookName: "x", attributes: many })).toEqual([]);
    // 16 keys of 1 byte and values of 1023 bytes: exactly 16,384 bytes.
    const large = Object.fromEntries(Array.from({ length: 16 }, (_, index) => [String.fromCharCode(97 + index), "x".repeat(1023)]));
    expect(issuesOf({ bookName: "x", attributes: large })).toEqual([]);
  });

  it.each<[string, Record<string, unknown>, string]>([
    [
      "more than 64 attributes",
      Object.fromEntries(Array.from({ length: 70_000 }, (_, index) => [`k${index}`, "v"])),
      "attributes must hold at most 64 entries (got 70000)",
    ],
    [
      "more than 16 KiB of keys and values",
      { ...Object.fromEntries(Array.from({ length: 16 }, (_, index) => [String.fromCharCode(97 + index), "x".repeat(1023)])), q: "" },
      "attributes must total at most 16384 bytes of keys and values (got 16385)",
    ],
    [
      "16 KiB counted in UTF-8 bytes, not characters",
      Object.fromEntries(Array.from({ length: 6 }, (_, index) => [String(index), "€".repeat(1000)])),
      "attributes must total at most 16384 bytes of keys and values (got 18006)",
    ],
  ])("refuses %s with one issue at attributes", (_name, attributes, message) => {
    expect(issuesOf({ bookName: "x", attributes })).toEqual([["attributes", message]]);
  });

  it("trims names and titles", () => {
    expect(PlaybookExecutionInput.parse({ bookName: "  checkout-latency " }).bookName).toBe("checkout-latency");
  });
});

describe("BatchExecutionInput", () => {
  it.each<[string, unknown, RegExp]>([
    ["inputList missing", {}, /expected array/],
    ["inputList not an array", { inputList: { bookName: "x" } }, /expected array/],
    ["inputList empty", { inputList: [] }, /at least one input/],
    ["an unknown envelope field", { inputList: [{}], dryRun: true }, /Unrecognized key/],
  ])("rejects %s", (_name, input, message) => {
    const parsed = BatchExecutionInput.safeParse(input);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toMatch(message);
  });

  it("leaves items to be validated one by one", () => {
    expect(BatchExecutionInput.parse({ inputList: [{}, 42], liveRun: true })).toEqual({ inputList: [{}, 42], liveRun: true });
  });
});

describe("ExecutionJob", () => {
  const job = {
    orgId: "acme",
    requestId: "r1",
    v: 1,
    replyTo: "api-1",
    deadline: 1_800_000_000_000,
    bookName: "checkout-latency",
    time,
    attributes: { service: "checkout" },
    liveRun: false,
  };

  it("accepts what the API enqueues", () => {
    expect(ExecutionJob.parse(job)).toEqual(job);
  });

  it("does not hold resolved attributes to the caller's caps: they include the title's captures", () => {
    const attributes = Object.fromEntries(Array.from({ length: 65 }, (_, index) => [`k${index}`, "v"]));
    expect(ExecutionJob.parse({ ...job, attributes }).attributes).toEqual(attributes);
  });

  it.each([
    ["without an organization", { ...job, orgId: "" }],
    ["with a non-string attribute", { ...job, attributes: { a: 1 } }],
  ])("rejects a job %s", (_name, input) => {
    expect(ExecutionJob.safeParse(input).success).toBe(false);
  });
});
