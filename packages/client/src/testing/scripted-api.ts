import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A request as the server received it. */
export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * What to do with one request: answer it, hold it open (a hung API) until the server closes, or reset
 * its connection once the request arrived (a network cut after the request was sent).
 */
export type ScriptedAnswer = { status: number; body?: unknown; headers?: Record<string, string> } | "hold" | "drop";

export interface ScriptedApi {
  url: string;
  requests: ReceivedRequest[];
  /** Resolves when the n-th request (from 1) has arrived. */
  waitForRequests(n: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * A real HTTP server on 127.0.0.1 answering requests in arrival order from `answers` (the last one
 * repeats), speaking the API's wire format: JSON bodies, `Retry-After`, `X-Request-Id`. A string body
 * is sent as is (a proxy's HTML page); anything else as JSON.
 */
export async function startScriptedApi(answers: readonly ScriptedAnswer[]): Promise<ScriptedApi> {
  const requests: ReceivedRequest[] = [];
  const held: ServerResponse[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      requests.push({ method: request.method ?? "", url: request.url ?? "", headers: request.headers, body: Buffer.concat(chunks).toString() });
      for (const waiter of waiters.filter((w) => requests.length >= w.n)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
      const answer = answers[Math.min(requests.length, answers.length) - 1] ?? { status: 500 };
      if (answer === "hold") {
        held.push(response);
        return;
      }
      if (answer === "drop") {
        request.socket.resetAndDestroy();
        return;
      }
      const text = answer.body === undefined ? "" : typeof answer.body === "string" ? answer.body : JSON.stringify(answer.body);
      response.writeHead(answer.status, { "content-type": typeof answer.body === "string" ? "text/html" : "application/json", ...answer.headers });
      response.end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    waitForRequests: (n) => (requests.length >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve }))),
    close: () =>
      new Promise((resolve) => {
        for (const response of held.splice(0)) response.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
