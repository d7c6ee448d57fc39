import { DEFAULT_BATCH_MAX_ITEMS, type BatchExecutionResult, type PlaybookExecutionInput } from "@pes/contracts";
import type { BatchRequest, CallOptions, PesClient } from "./pes-client.js";

export interface ChunkedBatchOptions extends CallOptions {
  /**
   * Inputs per request (default 100, the API's default BATCH_MAX_ITEMS). Must not exceed the API's
   * BATCH_MAX_ITEMS, which answers a larger batch with a 400. `timeoutMs` applies to each request.
   */
  chunkSize?: number;
  liveRun?: boolean;
  channelId?: string;
}

/** The results of one request: those of `inputs[offset]` to `inputs[offset + results.length - 1]`. */
export interface BatchChunk {
  offset: number;
  results: BatchExecutionResult;
  /** Inputs answered so far, this chunk included, out of `total`. */
  done: number;
  total: number;
}

/**
 * Runs any number of inputs as consecutive batch requests of at most `chunkSize`, yielding each
 * chunk's results as they arrive (in input order), so that a caller can write them out and report
 * progress without holding every result. One request at a time: a batch already counts every item
 * against the API instance's MAX_IN_FLIGHT. A failed request ends the iteration with its error; the chunks
 * yielded before it stand.
 */
export async function* runBatchInChunks(
  client: Pick<PesClient, "runBatch">,
  inputs: readonly PlaybookExecutionInput[],
  options: ChunkedBatchOptions = {},
): AsyncGenerator<BatchChunk, void, undefined> {
  const { chunkSize = DEFAULT_BATCH_MAX_ITEMS, liveRun, channelId, ...callOptions } = options;
  if (!Number.isInteger(chunkSize) || chunkSize < 1) throw new RangeError(`chunkSize must be a positive integer, got ${chunkSize}`);
  for (let offset = 0; offset < inputs.length; offset += chunkSize) {
    const request: BatchRequest = { inputList: inputs.slice(offset, offset + chunkSize) };
    if (liveRun !== undefined) request.liveRun = liveRun;
    if (channelId !== undefined) request.channelId = channelId;
    const results = await client.runBatch(request, callOptions);
    yield { offset, results, done: offset + results.length, total: inputs.length };
  }
}
