import { describe, expect, it } from "vitest";
import { collectAttribute, inputFromFlags, inputsFromJsonLines, UsageError, withSeconds } from "./cli-inputs.js";

describe("the CLI's inputs", () => {
  it("splits --attr at the first '=' and lets a repeated key win", () => {
    expect(collectAttribute("query=a=b", collectAttribute("host=web-1"))).toEqual({ host: "web-1", query: "a=b" });
    expect(collectAttribute("host=web-2", { host: "web-1" })).toEqual({ host: "web-2" });
    expect(collectAttribute("empty=")).toEqual({ empty: "" });
    expect(() => collectAttribute("=x")).toThrow(UsageError);
  });

  it("completes minutes-only times and leaves the rest to the contract", () => {
    expect(withSeconds("2026-11-21T13:43Z")).toBe("2026-11-21T13:43:00Z");
    expect(withSeconds("2026-11-21T13:43+01:00")).toBe("2026-11-21T13:43:00+01:00");
    expect(withSeconds("2026-11-21T13:43:07Z")).toBe("2026-11-21T13:43:07Z");
    expect(withSeconds("2026-11-21")).toBe("2026-11-21");
  });

  it("names the flag in a contract error", () => {
    expect(() => inputFromFlags({ messageLink: "http://acme.slack.com/x" })).toThrow(/--message-link: messageLink must be an absolute https URL/);
    expect(() => inputFromFlags({})).toThrow(/--book: One of bookName, messageLink or title is required/);
  });

  it("reads JSON Lines, skipping blank lines (CRLF too)", () => {
    expect(inputsFromJsonLines('{"bookName":"a"}\r\n\r\n  \n{"bookName":"b","liveRun":true}', "f")).toEqual([
      { bookName: "a" },
      { bookName: "b", liveRun: true },
    ]);
  });

  it("reports at most 20 bad lines, then how many more", () => {
    const text = Array.from({ length: 25 }, () => "[]").join("\n");
    const read = () => inputsFromJsonLines(text, "f");
    expect(read).toThrow(UsageError);
    expect(read).toThrow(/^nothing sent: 25 bad line\(s\)\nf:1: /);
    expect(read).toThrow(/f:20: .*\n… and 5 more bad lines$/);
  });
});
