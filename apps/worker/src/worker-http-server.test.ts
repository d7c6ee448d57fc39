import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createWorkerMetrics } from "@pes/metrics";
import { afterEach, describe, expect, it } from "vitest";
import { createWorkerHttpServer, listenWorkerHttp } from "./worker-http-server.js";

const servers: Server[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => (server.listening ? new Promise((resolve) => server.close(resolve)) : undefined)));
});

function workerHttp(): Server {
  const server = createWorkerHttpServer({ metrics: createWorkerMetrics({ jobNames: [] }), metricsToken: undefined, isReady: () => true });
  servers.push(server);
  return server;
}

describe("listenWorkerHttp", () => {
  it("listens, on a free port for 0", async () => {
    const server = workerHttp();
    const port = await listenWorkerHttp(server, { port: 0, host: "127.0.0.1" });
    expect(port).toBe((server.address() as AddressInfo).port);
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
  });

  it("says in one line which setting to change when the port is taken (a second worker on the host)", async () => {
    const first = createServer();
    servers.push(first);
    first.listen(0, "127.0.0.1");
    await once(first, "listening");
    const { port } = first.address() as AddressInfo;

    const error = await listenWorkerHttp(workerHttp(), { port, host: "127.0.0.1" }).then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(Error);
    const message = (error as Error).message;
    expect(message).toBe(
      `WORKER_HTTP_PORT=${port} is in use on 127.0.0.1 (another worker on this host?): give each worker on a host its own WORKER_HTTP_PORT, or 0 for a free one`,
    );
  });
});
