import type { BatchView } from "@pes/executions";
import { describe, expect, it } from "vitest";
import { createBatchProgressHub, type BatchProgress } from "./batch-progress-hub.js";

const view = (done: number, total = 2): BatchView => ({
  id: "b-1",
  status: done === total ? "completed" : "running",
  createdAt: new Date("2024-05-01T12:00:00Z"),
  progress: { total, done, failed: 0 },
  items: [],
});

/** A read answered by the test, one call at a time. */
function scriptedRead() {
  const calls: { batchId: string; orgId: string; answer: (view: BatchView | undefined) => void }[] = [];
  let called = () => {};
  return {
    calls,
    read: (orgId: string, batchId: string) =>
      new Promise<BatchView | undefined>((answer) => {
        calls.push({ batchId, orgId, answer });
        called();
      }),
    /** Resolves once the read has been called `count` times. */
    async called(count: number) {
      while (calls.length < count) await new Promise<void>((resolve) => (called = resolve));
    },
  };
}

/** Lets an answered read reach the watchers: the hub goes on in promise callbacks, all run before this resolves. */
const settled = () => new Promise((resolve) => setImmediate(resolve));

const doneOf = (progress: BatchProgress) => (progress.kind === "view" ? progress.view.progress.done : progress.kind);

describe("the batch progress hub", () => {
  it("reads a batch once for all its watchers, tells each of them every change, a late one the latest at once, and stops at the end", async () => {
    const reads = scriptedRead();
    const hub = createBatchProgressHub({ read: reads.read, intervalMs: 1 });
    const heard: Record<string, (number | string)[]> = { a: [], b: [], late: [] };
    hub.watch("acme", "b-1", (progress) => heard.a?.push(doneOf(progress)));
    hub.watch("acme", "b-1", (progress) => heard.b?.push(doneOf(progress)));
    await reads.called(1);
    reads.calls[0]?.answer(view(0));
    await reads.called(2);
    reads.calls[1]?.answer(view(0));
    await reads.called(3);
    hub.watch("acme", "b-1", (progress) => heard.late?.push(doneOf(progress)));
    await Promise.resolve();
    expect(heard.late).toEqual([0]);
    reads.calls[2]?.answer(view(2));
    await settled();
    expect(heard).toEqual({ a: [0, 2], b: [0, 2], late: [0, 2] });
    expect(hub.watched).toBe(0);
    expect(reads.calls.map(({ batchId, orgId }) => [batchId, orgId])).toEqual([
      ["b-1", "acme"],
      ["b-1", "acme"],
      ["b-1", "acme"],
    ]);
  });

  it("stops reading the moment its last watcher leaves, even during a read, and tells nobody", async () => {
    const reads = scriptedRead();
    const hub = createBatchProgressHub({ read: reads.read, intervalMs: 1 });
    const heard: BatchProgress[] = [];
    const leave = hub.watch("acme", "b-1", (progress) => heard.push(progress));
    await reads.called(1);
    leave();
    expect(hub.watched).toBe(0);
    reads.calls[0]?.answer(view(0));
    await settled();
    expect(heard).toEqual([]);
    expect(hub.watched).toBe(0);
    expect(reads.calls).toHaveLength(1);
  });

  it("reads for each organization on its own, and tells a batch it does not have as missing", async () => {
    const reads = scriptedRead();
    const hub = createBatchProgressHub({ read: reads.read, intervalMs: 1 });
    const heard: (number | string)[] = [];
    hub.watch("acme", "b-1", () => {});
    hub.watch("globex", "b-1", (progress) => heard.push(doneOf(progress)));
    await reads.called(2);
    expect(reads.calls.map(({ orgId }) => orgId)).toEqual(["acme", "globex"]);
    reads.calls[1]?.answer(undefined);
    await settled();
    expect(heard).toEqual(["missing"]);
    expect(hub.watched).toBe(1);
  });

  it("tells every watcher a failed read, and stops", async () => {
    const hub = createBatchProgressHub({ read: () => Promise.reject(new Error("redis went away")), intervalMs: 1 });
    const heard: BatchProgress[] = [];
    hub.watch("acme", "b-1", (progress) => heard.push(progress));
    await settled();
    expect(heard).toEqual([{ kind: "error", error: new Error("redis went away") }]);
    expect(hub.watched).toBe(0);
  });
});
