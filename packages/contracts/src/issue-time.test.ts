import type { z } from "zod";
import { describe, expect, it } from "vitest";
import { AlertmanagerAlert } from "./alert-webhook.js";
import { PlaybookExecutionInput } from "./execution-input.js";
import { ExecutionJob } from "./execution-job.js";
import { utcIssueTime } from "./issue-time.js";

/** The first and last instants of the years 0000–9999, in UTC and with the widest offsets that reach them. */
const EXTREMES = ["0000-01-01T00:00:00Z", "0000-01-01T23:59:00+23:59", "9999-12-31T23:59:59.999Z", "9999-12-31T00:00:59.999-23:59"];
/** Valid ISO 8601 date-times that an offset carries outside those years, by a day or by a millisecond. */
const OUTSIDE = ["0000-01-01T00:00:00+23:59", "0000-01-01T23:58:59.999+23:59", "9999-12-31T23:59:59-23:59", "9999-12-31T00:01:00-23:59"];

const job = { orgId: "acme", requestId: "r1", v: 1, replyTo: "api-1", deadline: 1_800_000_000_000, bookName: "disk-full", attributes: {}, liveRun: false };

/** The schemas that carry an issue time, each with the path of the time in it. */
const carriers: [string, (time: string) => z.ZodSafeParseResult<unknown>, string][] = [
  ["PlaybookExecutionInput's time", (time) => PlaybookExecutionInput.safeParse({ bookName: "disk-full", time }), "time"],
  ["AlertmanagerAlert's startsAt", (time) => AlertmanagerAlert.safeParse({ labels: {}, startsAt: time }), "startsAt"],
  ["ExecutionJob's time", (time) => ExecutionJob.safeParse({ ...job, time }), "time"],
];

describe.each(carriers)("%s", (_name, parse, field) => {
  it.each(EXTREMES)("accepts %s, in the years 0000–9999 in UTC", (time) => {
    expect(parse(time).error?.issues).toBeUndefined();
  });

  it.each(OUTSIDE)("refuses %s, outside them once in UTC", (time) => {
    expect(parse(time).error?.issues.map(({ path, message }) => ({ path, message }))).toEqual([
      { path: [field], message: `${field} must fall within the years 0000 to 9999 once converted to UTC` },
    ]);
  });

  it("refuses what is not a date-time with one issue, not also one about its years", () => {
    expect(parse("yesterday").error?.issues.map(({ path, message }) => ({ path, message }))).toEqual([
      { path: [field], message: `${field} must be an ISO 8601 date-time with a Z or an offset` },
    ]);
  });
});

describe("utcIssueTime", () => {
  it("writes an accepted time in UTC, as a job's time the worker reads back", () => {
    const utc = EXTREMES.map(utcIssueTime);
    expect(utc).toEqual(["0000-01-01T00:00:00.000Z", "0000-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999Z"]);
    expect(utc.map((time) => ExecutionJob.safeParse({ ...job, time }).error)).toEqual(utc.map(() => undefined));
  });
});
