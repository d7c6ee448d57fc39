import type { ServerResponse } from "node:http";
import type { BatchView } from "@pes/executions";
import { AppError } from "../errors.js";
import { clientGone } from "../slow-client.js";
import { batchJson } from "./batch-json.js";
import type { BatchProgress, BatchProgressListener } from "./batch-progress-hub.js";

export function acceptsEventStream(accept: string | undefined): boolean {
  return (accept ?? "").split(",").some((type) => type.split(";", 1)[0]?.trim().toLowerCase() === "text/event-stream");
}

/**
 * Answers with server-sent events: `progress` with the batch's progress as `watch` tells it (the first
 * at once), `completed` when every item finished, then the end; a comment line after `keepAliveMs`
 * without an event keeps proxies from closing a quiet stream. Stops listening the moment the client
 * goes away, including before the first event. Rejects with a 404 when the batch is missing and with
 * the read's error when the first read failed: nothing was sent yet, the error middleware answers.
 */
export function streamProgress(res: ServerResponse, watch: (listener: BatchProgressListener) => () => void, keepAliveMs: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    // Gone while it was authenticated: the 'close' below would never come.
    if (clientGone(res)) {
      resolve();
      return;
    }
    let keepAlive: NodeJS.Timeout | undefined;
    const quiet = () => {
      clearTimeout(keepAlive);
      keepAlive = setTimeout(() => {
        res.write(": keep-alive\n\n");
        quiet();
      }, keepAliveMs);
    };
    const send = (event: string, view: BatchView) => {
      res.write(`event: ${event}\ndata: ${batchJson({ ...view, items: [] }, 0).text}\n\n`);
      quiet();
    };
    const finish = (error?: unknown) => {
      unwatch();
      clearTimeout(keepAlive);
      res.off("close", onClose);
      if (error === undefined) resolve();
      else reject(error);
    };
    const onClose = () => finish();
    res.on("close", onClose);
    const unwatch = watch((progress: BatchProgress) => {
      if (!res.headersSent) {
        if (progress.kind === "missing") return finish(new AppError("not_found", "No such batch"));
        if (progress.kind === "error") return finish(progress.error);
        res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-store", "X-Accel-Buffering": "no" });
      }
      if (progress.kind === "error") {
        // Anything but Redis going away is a bug: the error middleware logs it and drops the connection.
        if (!(progress.error instanceof AppError)) return finish(progress.error);
        // The stream is open: the client learns of it from an event, not a status.
        res.end(`event: error\ndata: ${JSON.stringify({ error: progress.error.message })}\n\n`);
        return finish();
      }
      // Expired while streamed: the stream ends.
      if (progress.kind === "missing") {
        res.end();
        return finish();
      }
      if (progress.view.status !== "completed") return send("progress", progress.view);
      send("completed", progress.view);
      res.end();
      return finish();
    });
  });
}
