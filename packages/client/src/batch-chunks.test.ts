import { describe, expect, it } from "vitest";
import type { PlaybookExecutionInput } from "@pes/contracts";
import { ApiError } from "./client-errors.js";
import { runBatchInChunks } from "./batch-chunks.js";
import type { BatchRequest, PesClient } from "./pes-client.js";

const inputs: PlaybookExecutionInput[] = Array.from({ length: 7 }, (_, i) => ({ bookName: "node-cpu", attributes: { host: `web-${i}` } }));

/** Answers each item with its host, so the test sees which inputs each request carried. */
function echoingClient(sent: BatchRequest[], failAt?: number): Pick<PesClient, "runBatch"> {
  return {
    runBatch: async (request) => {
      sent.push(request);
      if (sent.length === failAt) throw new ApiError(503, { error: "queue down" }, undefined, undefined);
      return request.inputList.map((input) => ({ highlights: input.attributes?.host ?? "" }));
    },
  };
}

describe("runBatchInChunks", () => {
  it("sends consecutive requests of at most chunkSize and yields their results in input order", async () => {
    const sent: BatchRequest[] = [];
    const chunks = [];
    for await (const chunk of runBatchInChunks(echoingClient(sent), inputs, { chunkSize: 3, liveRun: true })) chunks.push(chunk);
    expect(sent.map((request) => request.inputList.length)).toEqual([3, 3, 1]);
    expect(sent.every((request) => request.liveRun === true && request.channelId === undefined)).toBe(true);
    expect(chunks.map(({ offset, done, total }) => ({ offset, done, total }))).toEqual([
      { offset: 0, done: 3, total: 7 },
      { offset: 3, done: 6, total: 7 },
      { offset: 6, done: 7, total: 7 },
    ]);
    expect(chunks.flatMap((chunk) => chunk.results.map((result) => result.highlights))).toEqual(inputs.map((input) => input.attributes?.host));
  });

  it("ends with a request's error, after yielding the chunks before it", async () => {
    const sent: BatchRequest[] = [];
    const seen: number[] = [];
    const run = async () => {
      for await (const chunk of runBatchInChunks(echoingClient(sent, 2), inputs, { chunkSize: 3 })) seen.push(chunk.done);
    };
    await expect(run()).rejects.toMatchObject({ status: 503 });
    expect(seen).toEqual([3]);
    expect(sent).toHaveLength(2);
  });

  it("refuses a chunk size that is not a positive integer", async () => {
    const run = runBatchInChunks(echoingClient([]), inputs, { chunkSize: 0 });
    await expect(run.next()).rejects.toThrow(/chunkSize/);
  });
});
