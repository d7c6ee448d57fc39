import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer, type ServerOptions as HttpsOptions } from "node:https";
import { createChangeSignal } from "./change-signal.js";

/** A request as the test server saw it, body included. */
export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  /** The body as UTF-8 text. */
  body: string;
  /** The body's bytes, for what is not text (an uploaded file). */
  bytes: Buffer;
}

/** Answers one request; the raw request is `response.req` for the rare test that needs its socket. */
export type TestHttpHandler = (request: SeenRequest, response: ServerResponse) => void | Promise<void>;

export interface TestHttpServer {
  /** `http://127.0.0.1:<port>` (`https://` with the `https` option), no trailing slash. */
  url: string;
  port: number;
  /** Every request, in the order their bodies ended. */
  requests: SeenRequest[];
  /** The node server, for events the handler does not see (`connect` of a proxy). */
  server: Server;
  /** Resolves once `count` requests have arrived in total. */
  waitForRequests(count: number): Promise<void>;
  /** Resolves once `count` requests in total were closed by their client before they were answered. */
  waitForAbandoned(count: number): Promise<void>;
  /** From now on requests are recorded but not handled until `release()`. */
  hold(): void;
  /** Handles the held requests whose clients are still waiting, and every later one at once. */
  release(): void;
  /** Stops listening and drops every connection, held ones included. Safe to call twice. */
  close(): Promise<void>;
}

export interface TestHttpServerOptions {
  /** Listen on this port (to bring a fake service back where it was); default: one the OS picks. */
  port?: number;
  /** Serve HTTPS with these options (key, cert, client-certificate settings). */
  https?: HttpsOptions;
  /** Start holding, as if `hold()` were called before the first request. */
  hold?: boolean;
}

/**
 * A real HTTP server on 127.0.0.1 playing a third party in a test: it records every request with its
 * body, answers with `handle`, can hold requests until the test lets them through, and counts the
 * ones a client gave up on, so a test waits for those events rather than for time.
 * A handler that throws or rejects drops its request's connection.
 */
export async function startTestHttpServer(handle: TestHttpHandler, options: TestHttpServerOptions = {}): Promise<TestHttpServer> {
  const requests: SeenRequest[] = [];
  const signal = createChangeSignal();
  let abandoned = 0;
  let holding = options.hold ?? false;
  const held: Array<() => void> = [];

  const run = (seen: SeenRequest, response: ServerResponse) => {
    void Promise.resolve()
      .then(() => handle(seen, response))
      .catch((error: unknown) => response.destroy(error instanceof Error ? error : new Error(String(error))));
  };
  const onRequest = (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const bytes = Buffer.concat(chunks);
      const seen: SeenRequest = { method: request.method ?? "", url: request.url ?? "", headers: request.headers, body: bytes.toString("utf8"), bytes };
      requests.push(seen);
      response.on("close", () => {
        if (response.writableFinished) return;
        abandoned += 1;
        signal.changed();
      });
      signal.changed();
      if (holding) {
        held.push(() => {
          if (!response.destroyed) run(seen, response);
        });
      } else {
        run(seen, response);
      }
    });
  };
  const server: Server = options.https === undefined ? createHttpServer(onRequest) : createHttpsServer(options.https, onRequest);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the test server has no port");

  let closed: Promise<void> | undefined;
  return {
    url: `${options.https === undefined ? "http" : "https"}://127.0.0.1:${address.port}`,
    port: address.port,
    requests,
    server,
    waitForRequests: (count) => signal.until(() => requests.length >= count),
    waitForAbandoned: (count) => signal.until(() => abandoned >= count),
    hold: () => {
      holding = true;
    },
    release: () => {
      holding = false;
      for (const answer of held.splice(0)) answer();
    },
    close: () => {
      closed ??= new Promise<void>((resolve, reject) => {
        held.length = 0;
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      });
      return closed;
    },
  };
}

/** Answers with a JSON body and its length. */
export function sendJson(response: ServerResponse, status: number, body: unknown, contentType = "application/json"): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { "content-type": contentType, "content-length": Buffer.byteLength(text) });
  response.end(text);
}
