import { describe, expect, it } from "vitest";
import { MessageLinkError, parseMessageLink } from "./message-link.js";

/** The time of the request. */
const NOW = new Date("2024-05-01T12:00:00Z");

describe("parseMessageLink", () => {
  it("reads a top-level message permalink", () => {
    expect(parseMessageLink("https://acme.slack.com/archives/C0123ABCD/p1700000000123456", [], NOW)).toEqual({
      channelId: "C0123ABCD",
      ts: "1700000000.123456",
      time: new Date("2023-11-14T22:13:20.123Z"),
    });
  });

  it("reads a thread reply", () => {
    const link = parseMessageLink("https://acme-corp.enterprise.slack.com/archives/G99/p1700000100000001?thread_ts=1700000000.123456&cid=G99", [], NOW);
    expect(link).toEqual({
      channelId: "G99",
      ts: "1700000100.000001",
      threadTs: "1700000000.123456",
      time: new Date(1_700_000_100_000),
    });
  });

  it("accepts an upper-case Slack host, a trailing slash and the default port", () => {
    expect(parseMessageLink("https://ACME.Slack.COM:443/archives/C1/p1700000000123456/", [], NOW).ts).toBe("1700000000.123456");
  });

  it("accepts message times from the start of 2013 to a day after the request", () => {
    expect(parseMessageLink("https://acme.slack.com/archives/C1/p1356998400000000", [], NOW).time).toEqual(new Date("2013-01-01T00:00:00Z"));
    expect(parseMessageLink("https://acme.slack.com/archives/C1/p1714651200000000", [], NOW).time).toEqual(new Date("2024-05-02T12:00:00Z"));
  });

  it("accepts a configured host, compared lower-cased", () => {
    expect(parseMessageLink("https://chat.example.com/archives/C1/p1700000000123456", ["Chat.Example.com"], NOW).channelId).toBe("C1");
  });

  it.each([
    ["https://example.com/archives/C1/p1700000000123456", "messageLink host example.com is not an allowed chat host"],
    ["https://evil.com/x.slack.com/archives/C1/p1700000000123456", "messageLink host evil.com is not an allowed chat host"],
    ["https://slack.com.evil.com/archives/C1/p1700000000123456", "messageLink host slack.com.evil.com is not an allowed chat host"],
    ["https://evilslack.com/archives/C1/p1700000000123456", "messageLink host evilslack.com is not an allowed chat host"],
    ["https://slack.com/archives/C1/p1700000000123456", "messageLink host slack.com is not an allowed chat host"],
    ["https://acme.slack.com./archives/C1/p1700000000123456", "messageLink host acme.slack.com. is not an allowed chat host"],
    ["https://evil.com\\.slack.com/archives/C1/p1700000000123456", "messageLink host evil.com is not an allowed chat host"],
    ["https://sub.chat.example.com/archives/C1/p1700000000123456", "messageLink host sub.chat.example.com is not an allowed chat host"],
    ["https://x.slack.com@evil.com/archives/C1/p1700000000123456", "messageLink must not contain user info"],
    ["https://user:pw@acme.slack.com/archives/C1/p1700000000123456", "messageLink must not contain user info"],
    ["https://acme.slack.com:8443/archives/C1/p1700000000123456", "messageLink must not name a port"],
    ["http://acme.slack.com/archives/C1/p1700000000123456", "messageLink must be an https URL"],
    ["javascript:alert(1)//acme.slack.com", "messageLink must be an https URL"],
    ["not a url", "messageLink is not a valid URL"],
    ["https://.slack.com/archives/C1/p1700000000123456", "messageLink host .slack.com is not an allowed chat host"],
    ["https://..slack.com/archives/C1/p1700000000123456", "messageLink host ..slack.com has an empty label"],
    ["https://a..slack.com/archives/C1/p1700000000123456", "messageLink host a..slack.com has an empty label"],
    ["https://%2e.slack.com/archives/C1/p1700000000123456", "messageLink host ..slack.com has an empty label"],
    ["https://a\u3002\u3002slack.com/archives/C1/p1700000000123456", "messageLink host a..slack.com has an empty label"],
    ["https://acme.slack.com/archives/C1/p0000000000000000", "messageLink time 1970-01-01T00:00:00.000Z is before 2013, when Slack began"],
    ["https://acme.slack.com/archives/C1/p1356998399999999", "messageLink time 2012-12-31T23:59:59.999Z is before 2013, when Slack began"],
    ["https://acme.slack.com/archives/C1/p9999999999999999", "messageLink time 2286-11-20T17:46:39.999Z is more than a day in the future"],
    ["https://acme.slack.com/archives/C1/p1714651200001000", "messageLink time 2024-05-02T12:00:00.001Z is more than a day in the future"],
  ])("refuses %s", (link, message) => {
    expect(() => parseMessageLink(link, ["chat.example.com"], NOW)).toThrow(new MessageLinkError(message));
  });

  it.each([
    "https://acme.slack.com/archives/C1/p170000000012345",
    "https://acme.slack.com/archives/C1/p17000000001234567",
    "https://acme.slack.com/archives/C1/1700000000123456",
    "https://acme.slack.com/archives/c1/p1700000000123456",
    "https://acme.slack.com/archives/C1",
    "https://acme.slack.com/messages/C1/p1700000000123456",
    "https://acme.slack.com/archives/C1/p1700000000123456/extra",
    "https://acme.slack.com/archives/C1/../C2/p1700000000123456x",
  ])("refuses the path of %s", (link) => {
    expect(() => parseMessageLink(link, [], NOW)).toThrow(/must be a message permalink/);
  });

  it("refuses a malformed thread_ts", () => {
    expect(() => parseMessageLink("https://acme.slack.com/archives/C1/p1700000000123456?thread_ts=abc", [], NOW)).toThrow(
      /thread_ts must be a Slack timestamp/,
    );
  });

  it("throws MessageLinkError instances", () => {
    expect(() => parseMessageLink("https://example.com/", [], NOW)).toThrow(MessageLinkError);
  });
});
