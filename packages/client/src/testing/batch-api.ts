import { EventEmitter } from "node:events";
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { BatchItemStatus, BatchStatus, PlaybookExecutionResult } from "@pes/contracts";

/** A request as the server received it. */
export interface BatchApiRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface FakeBatchApi {
  url: string;
  batchId: string;
  requests: BatchApiRequest[];
  /** Finishes item `index`: `completed` with `result`, or `failed` when the result carries `error`. */
  finish(index: number, result: PlaybookExecutionResult): void;
  /** Resolves once `count` requests matching `test` have arrived. */
  waitFor(test: (request: BatchApiRequest) => boolean, count?: number): Promise<void>;
  /** Resets every open connection, event streams included, as a network cut would; the server keeps listening. */
  dropConnections(): void;
  close(): Promise<void>;
}

/**
 * A real HTTP server on 127.0.0.1 speaking the API's async batch wire format for one batch of `total`
 * items, which finish when the test says: `POST /playbook/execution/batch` (202 with BatchStatus), `GET
 * …/batch/{id}?offset&limit` (a page of items), and with `Accept: text/event-stream` the progress events
 * (`progress` at once and at each change, `completed` last, then the end), as apps/api sends them.
 */
export async function startFakeBatchApi(total: number, batchId = "4b7c0f3e-2a51-4c7e-9d1e-6f0a8b3c2d19"): Promise<FakeBatchApi> {
  const requests: BatchApiRequest[] = [];
  const items: BatchItemStatus[] = Array.from({ length: total }, (_, index) => ({ index, executionId: `e-${index}`, status: "queued" }));
  const changed = new EventEmitter();
  const streams = new Set<ServerResponse>();
  const sockets = new Set<Socket>();

  const status = (offset: number, limit: number): BatchStatus => {
    const done = items.filter((item) => item.status === "completed" || item.status === "failed").length;
    const failed = items.filter((item) => item.status === "failed").length;
    return {
      id: batchId,
      status: done === total ? "completed" : "running",
      createdAt: "2026-11-21T13:43:00.000Z",
      progress: { total, done, failed },
      offset,
      items: items.slice(offset, offset + limit),
    };
  };
  const json = (response: ServerResponse, code: number, body: unknown) => {
    response.writeHead(code, { "content-type": "application/json" });
    response.end(JSON.stringify(body));
  };
  const stream = (response: ServerResponse) => {
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store" });
    streams.add(response);
    let sent = "";
    const send = () => {
      const now = status(0, 0);
      const key = JSON.stringify(now.progress);
      if (key === sent) return;
      sent = key;
      const last = now.status === "completed";
      response.write(`event: ${last ? "completed" : "progress"}\ndata: ${JSON.stringify(now)}\n\n`);
      if (last) response.end();
    };
    changed.on("change", send);
    response.on("close", () => {
      changed.off("change", send);
      streams.delete(response);
    });
    send();
  };

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const seen = { method: request.method ?? "", url: request.url ?? "", headers: request.headers, body: Buffer.concat(chunks).toString() };
      requests.push(seen);
      changed.emit("request");
      const url = new URL(seen.url, "http://localhost");
      if (seen.method === "POST" && url.pathname === "/playbook/execution/batch") {
        response.setHeader("location", `/playbook/execution/batch/${batchId}`);
        return json(response, 202, status(0, 0));
      }
      if (seen.method === "GET" && url.pathname === `/playbook/execution/batch/${batchId}`) {
        if ((seen.headers.accept ?? "").includes("text/event-stream")) return stream(response);
        return json(response, 200, status(Number(url.searchParams.get("offset") ?? 0), Number(url.searchParams.get("limit") ?? 100)));
      }
      return json(response, 404, { error: "No such batch" });
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    batchId,
    requests,
    finish(index, result) {
      const item = items[index];
      if (item === undefined) throw new RangeError(`no item ${index}`);
      item.status = result.error === undefined ? "completed" : "failed";
      item.result = result;
      changed.emit("change");
    },
    waitFor: (test, count = 1) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (requests.filter(test).length < count) return;
          changed.off("request", check);
          resolve();
        };
        changed.on("request", check);
        check();
      }),
    dropConnections() {
      for (const socket of sockets) socket.resetAndDestroy();
    },
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Whether a request is a read of the event stream, or of a page. */
export const isEventStream = (request: BatchApiRequest): boolean => (request.headers.accept ?? "").includes("text/event-stream");
export const isPageRead = (request: BatchApiRequest): boolean => request.method === "GET" && !isEventStream(request);
