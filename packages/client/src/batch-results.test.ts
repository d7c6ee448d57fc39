import { afterEach, describe, expect, it } from "vitest";
import type { BatchStatus } from "@pes/contracts";
import { freePort } from "@pes/local-services";
import type { BatchReconnect } from "./batch-results.js";
import { ApiError, UnreachableError } from "./client-errors.js";
import { createClient } from "./pes-client.js";
import { isEventStream, isPageRead, startFakeBatchApi, type FakeBatchApi } from "./testing/batch-api.js";
import { startScriptedApi } from "./testing/scripted-api.js";

let api: FakeBatchApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

/** A client whose reconnect waits are recorded, not spent. */
function clientOf(url: string, waits: number[] = []) {
  return createClient({
    baseUrl: url,
    token: "t0k3n",
    sleep: async (ms) => {
      waits.push(ms);
    },
  });
}

const resultOf = (index: number) => ({ highlights: `item ${index}` });

describe("client.batchResults", () => {
  it("yields each result in input order once it and every item before it finished, then ends", async () => {
    api = await startFakeBatchApi(5);
    const fake = api;
    const progress: BatchStatus["progress"][] = [];
    const results = clientOf(fake.url).batchResults(fake.batchId, { onProgress: (status) => progress.push(status.progress) });
    // Items 1 and 2 finish first: nothing can be written before item 0.
    fake.finish(1, resultOf(1));
    fake.finish(2, { error: "Execution timed out after 120000 ms" });
    const first = results.next();
    await fake.waitFor(isPageRead);
    await fake.waitFor(isEventStream);
    fake.finish(0, resultOf(0));
    expect(await first).toEqual({ done: false, value: { index: 0, status: "completed", executionId: "e-0", result: resultOf(0) } });
    expect((await results.next()).value).toMatchObject({ index: 1, result: resultOf(1) });
    expect((await results.next()).value).toMatchObject({ index: 2, status: "failed", result: { error: "Execution timed out after 120000 ms" } });
    const fourth = results.next();
    fake.finish(4, resultOf(4));
    fake.finish(3, resultOf(3));
    expect((await fourth).value).toMatchObject({ index: 3 });
    expect((await results.next()).value).toMatchObject({ index: 4 });
    expect(await results.next()).toEqual({ done: true, value: undefined });

    expect(progress[0]).toEqual({ total: 5, done: 2, failed: 1 });
    expect(progress.at(-1)).toEqual({ total: 5, done: 5, failed: 1 });
    // Each progress reported once, in growing order.
    expect(progress.map((p) => p.done)).toEqual([...new Set(progress.map((p) => p.done))].sort());
    // Every request carried the token; every page asked from the first result not yet yielded.
    expect(fake.requests.every((request) => request.headers.authorization === "Bearer t0k3n")).toBe(true);
    const offsets = fake.requests.filter(isPageRead).map((request) => Number(new URL(request.url, fake.url).searchParams.get("offset")));
    expect(offsets[0]).toBe(0);
    expect(offsets).toEqual([...offsets].sort((a, b) => a - b));
  });

  it("starts at `from`, reading nothing before it", async () => {
    api = await startFakeBatchApi(4);
    for (let i = 0; i < 4; i++) api.finish(i, resultOf(i));
    const seen: number[] = [];
    for await (const { index } of clientOf(api.url).batchResults(api.batchId, { from: 2 })) seen.push(index);
    expect(seen).toEqual([2, 3]);
    expect(api.requests.filter(isPageRead).map((request) => request.url)).toEqual([`/playbook/execution/batch/${api.batchId}?offset=2&limit=1000`]);
  });

  it("reads a page at a time, at most pageSize items each", async () => {
    api = await startFakeBatchApi(5);
    for (let i = 0; i < 5; i++) api.finish(i, resultOf(i));
    const seen: number[] = [];
    for await (const { index } of clientOf(api.url).batchResults(api.batchId, { pageSize: 2 })) seen.push(index);
    expect(seen).toEqual([0, 1, 2, 3, 4]);
    expect(api.requests.filter(isPageRead).map((request) => new URL(request.url, "http://x").search)).toEqual([
      "?offset=0&limit=2",
      "?offset=2&limit=2",
      "?offset=4&limit=2",
    ]);
  });

  it("connects again when every connection is cut, and yields each result once", async () => {
    api = await startFakeBatchApi(6);
    const fake = api;
    const reconnects: BatchReconnect[] = [];
    const results = clientOf(fake.url).batchResults(fake.batchId, { onReconnect: (reconnect) => reconnects.push(reconnect) });
    fake.finish(0, resultOf(0));
    fake.finish(1, resultOf(1));
    const seen = [(await results.next()).value?.index, (await results.next()).value?.index];
    const third = results.next();
    await fake.waitFor(isEventStream);
    const streamsBefore = fake.requests.filter(isEventStream).length;
    fake.dropConnections();
    // The stream comes back: a new one is opened before any more progress.
    await fake.waitFor(isEventStream, streamsBefore + 1);
    for (let i = 2; i < 6; i++) fake.finish(i, resultOf(i));
    seen.push((await third).value?.index);
    for await (const { index } of results) seen.push(index);
    expect(seen).toEqual([0, 1, 2, 3, 4, 5]);
    expect(reconnects[0]).toMatchObject({ attempt: 1, error: expect.any(UnreachableError) });
  });

  it("gives up after reconnectAttempts failures in a row, with the last error", async () => {
    api = await startFakeBatchApi(3);
    api.finish(0, resultOf(0));
    const waits: number[] = [];
    const results = clientOf(api.url, waits).batchResults(api.batchId, { reconnectAttempts: 3 });
    expect((await results.next()).value?.index).toBe(0);
    const rest = results.next();
    await api.close();
    api = undefined;
    await expect(rest).rejects.toBeInstanceOf(UnreachableError);
    // Three waits, growing, before the fourth failure ends it (the stream's and the reads' are counted apart).
    expect(waits.length).toBeGreaterThanOrEqual(3);
  });

  it("ends with a 404 at once for a batch the organization does not have", async () => {
    api = await startFakeBatchApi(1);
    const waits: number[] = [];
    const results = clientOf(api.url, waits).batchResults("no-such-batch");
    await expect(results.next()).rejects.toMatchObject({ status: 404 });
    expect(waits).toEqual([]);
  });

  it("refuses a `from` past the batch's items", async () => {
    api = await startFakeBatchApi(2);
    await expect(clientOf(api.url).batchResults(api.batchId, { from: 3 }).next()).rejects.toThrow(/from is 3, but batch .* has 2 items/);
  });

  it("stops when the caller aborts", async () => {
    api = await startFakeBatchApi(2);
    const controller = new AbortController();
    const results = clientOf(api.url).batchResults(api.batchId, { signal: controller.signal });
    const first = results.next();
    await api.waitFor(isEventStream);
    const reason = new Error("cancelled");
    controller.abort(reason);
    await expect(first).rejects.toBe(reason);
  });
});

describe("client.batchEvents", () => {
  it("gives the progress events of one stream, the completed one last", async () => {
    api = await startFakeBatchApi(2);
    const fake = api;
    const events = clientOf(fake.url).batchEvents(fake.batchId);
    expect((await events.next()).value).toMatchObject({ status: "running", progress: { total: 2, done: 0, failed: 0 } });
    fake.finish(0, resultOf(0));
    expect((await events.next()).value).toMatchObject({ progress: { done: 1 } });
    fake.finish(1, { error: "no" });
    expect((await events.next()).value).toMatchObject({ status: "completed", progress: { done: 2, failed: 1 } });
    expect((await events.next()).done).toBe(true);
  });

  it("throws an ApiError for a refused stream", async () => {
    api = await startFakeBatchApi(1);
    await expect(clientOf(api.url).batchEvents("nope").next()).rejects.toMatchObject({ kind: "http", status: 404, body: { error: "No such batch" } });
  });

  it("says the API is unreachable when nothing listens", async () => {
    const port = await freePort();
    await expect(clientOf(`http://127.0.0.1:${port}`).batchEvents("b").next()).rejects.toBeInstanceOf(UnreachableError);
  });

  it("gives up on a stream quiet for longer than idleTimeoutMs", async () => {
    api = await startFakeBatchApi(2);
    // Long enough for the first event to come on a busy host; the second never comes.
    const events = clientOf(api.url).batchEvents(api.batchId, { idleTimeoutMs: 1000 });
    await events.next();
    await expect(events.next()).rejects.toMatchObject({ kind: "timeout", timeoutMs: 1000 });
  });

  it("turns the API's error event (Redis gone mid-stream) into a 503", async () => {
    const scripted = await startScriptedApi([
      {
        status: 200,
        body: 'event: error\ndata: {"error":"Service unavailable: the job queue cannot be reached"}\n\n',
        headers: { "content-type": "text/event-stream" },
      },
    ]);
    try {
      const error = await clientOf(scripted.url)
        .batchEvents("b")
        .next()
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ status: 503, body: { error: "Service unavailable: the job queue cannot be reached" } });
    } finally {
      await scripted.close();
    }
  });
});
