import type { ServerResponse } from "node:http";
import type { BatchView } from "@pes/executions";
import { writeWithBackpressure } from "../slow-client.js";
import { batchEnvelope, batchItemJson } from "./batch-json.js";

/** A slice of a page is written once it holds this many items or characters, whichever comes first. */
const SLICE_ITEMS = 100;
const SLICE_CHARS = 64 * 1024;

/**
 * Sends one page of a batch (BatchStatus, 200) as JSON, a slice of items at a time. A page of 1,000
 * large results built in one piece held the event loop for its whole serialization and, for a client
 * that did not read, sat whole in the socket's buffer; slice by slice, other requests are served
 * between slices and at most a socket buffer waits for a slow client (see writeWithBackpressure).
 * Stops as soon as the client is gone.
 */
export async function sendBatchPage(res: ServerResponse, view: BatchView, offset: number, stallTimeoutMs: number): Promise<void> {
  const { open, close } = batchEnvelope(view, offset);
  res.statusCode = 200;
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.setHeader("Cache-Control", "no-store");
  let slice = open;
  let inSlice = 0;
  for (const [position, item] of view.items.entries()) {
    slice += (position === 0 ? "" : ",") + batchItemJson(item);
    inSlice += 1;
    if (inSlice < SLICE_ITEMS && slice.length < SLICE_CHARS) continue;
    if (!(await writeWithBackpressure(res, slice, stallTimeoutMs))) return;
    slice = "";
    inSlice = 0;
  }
  res.end(slice + close);
}
