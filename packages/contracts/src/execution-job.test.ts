import { describe, expect, it } from "vitest";
import { ExecutionJob, MessageExecutionJob, WIRE_VERSION } from "./execution-job.js";

const job = {
  v: WIRE_VERSION,
  orgId: "acme",
  requestId: "req-1",
  replyTo: "api-1",
  deadline: 1_767_261_600_000,
  bookName: "latency",
  time: "2026-01-01T10:00:00Z",
  attributes: { service: "checkout" },
  liveRun: false,
};

describe("ExecutionJob", () => {
  it("reads a job from a newer API: fields it does not know are dropped, not refused", () => {
    const parsed = ExecutionJob.safeParse({ ...job, v: WIRE_VERSION + 1, priorityLane: "sync", coalesce: { key: "k" } });
    expect(parsed.success).toBe(true);
    expect(parsed.data).toEqual({ ...job, v: WIRE_VERSION + 1 });
  });

  it.each(["v", "replyTo", "deadline", "orgId", "bookName", "time", "attributes", "liveRun"] as const)("still requires %s", (field) => {
    const { [field]: _dropped, ...rest } = job;
    expect(ExecutionJob.safeParse(rest).success).toBe(false);
  });
});

describe("MessageExecutionJob", () => {
  const messageJob = {
    v: WIRE_VERSION,
    orgId: "acme",
    requestId: "req-2",
    replyTo: "api-1",
    deadline: 1_767_261_600_000,
    messageLink: "https://acme.slack.com/archives/C0123ABCD/p1763732580000100",
    liveRun: true,
    channelId: "C0123ABCD",
    batch: { id: "b-1", index: 3, total: 10 },
  };

  it("needs no bookName, time or attributes: the message supplies them", () => {
    expect(MessageExecutionJob.safeParse(messageJob).data).toEqual(messageJob);
  });

  it("drops fields of a newer API, and still requires the link", () => {
    expect(MessageExecutionJob.safeParse({ ...messageJob, lane: "batch" }).data).toEqual(messageJob);
    const { messageLink: _link, ...rest } = messageJob;
    expect(MessageExecutionJob.safeParse(rest).success).toBe(false);
  });
});
