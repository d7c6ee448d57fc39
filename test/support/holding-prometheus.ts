import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A Prometheus query API on 127.0.0.1 that can hold requests open, so a test can stop or kill a worker
 * while it is mid-execution. Answers `/api/v1/query_range` and `/api/v1/query` with a flat series.
 */
export interface HoldingPrometheus {
  url: string;
  /** How many query requests arrived so far. */
  requests(): number;
  /** Resolves when the n-th request (counting from 1) has arrived. */
  waitForRequests(n: number): Promise<void>;
  /** While holding, requests get no answer until release(). */
  hold(): void;
  release(): void;
  close(): Promise<void>;
}

export async function startHoldingPrometheus(): Promise<HoldingPrometheus> {
  let count = 0;
  let holding = false;
  const held: ServerResponse[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];

  const answer = (response: ServerResponse) => {
    if (response.destroyed) return;
    const now = Math.floor(Date.now() / 1000);
    const values = Array.from({ length: 10 }, (_, i) => [now - 600 + i * 60, "1"]);
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify({ status: "success", data: { resultType: "matrix", result: [{ metric: {}, values }] } }));
  };

  const server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      count += 1;
      for (const waiter of waiters.filter((w) => count >= w.n)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
      if (holding) held.push(response);
      else answer(response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => count,
    waitForRequests: (n) => (count >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve }))),
    hold: () => {
      holding = true;
    },
    release: () => {
      holding = false;
      for (const response of held.splice(0)) answer(response);
    },
    close: () =>
      new Promise((resolve) => {
        for (const response of held.splice(0)) response.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
