import { describe, expect, it } from "vitest";
import { findStartTime, parseAlertTime } from "./alert-time.js";

describe("parseAlertTime", () => {
  it.each([
    ["2024-05-02T11:58:00Z", "2024-05-02T11:58:00.000Z"],
    ["2024-05-02T13:58:00.123456+02:00", "2024-05-02T11:58:00.123Z"],
    // Go's time.Time.String(), what {{ .StartsAt }} prints.
    ["2024-05-02 11:58:00.123456789 +0000 UTC", "2024-05-02T11:58:00.123Z"],
    ["2024-05-02 13:58:00 +0200 CEST", "2024-05-02T11:58:00.000Z"],
    // Datadog's.
    ["Thu May 02 2024 11:55:00 UTC", "2024-05-02T11:55:00.000Z"],
  ])("reads %s", (text, iso) => expect(parseAlertTime(text)?.toISOString()).toBe(iso));

  it.each(["yesterday", "2024-13-45T99:00:00Z", "Thu Feb 31 2024 11:55:00 UTC", "1714651200"])("refuses %s", (text) => {
    expect(parseAlertTime(text)).toBeUndefined();
  });
});

describe("findStartTime", () => {
  it("finds a start line as custom templates write it", () => {
    expect(findStartTime("Labels:\n - a = b\n*Started:* 2024-05-02 11:58:00 +0000 UTC\n")?.toISOString()).toBe("2024-05-02T11:58:00.000Z");
    expect(findStartTime("startsAt = 2024-05-02T11:58:00Z")?.toISOString()).toBe("2024-05-02T11:58:00.000Z");
    expect(findStartTime("Triggered at: `2024-05-02T11:58:00Z`")?.toISOString()).toBe("2024-05-02T11:58:00.000Z");
    expect(findStartTime("it started yesterday\nStart: soon")).toBeUndefined();
  });
});
