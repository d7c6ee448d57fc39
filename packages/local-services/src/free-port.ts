import { createServer } from "node:net";

/**
 * A TCP port on 127.0.0.1 that was free a moment ago: the OS picks it (listen on port 0), we close
 * the socket and hand the number to a child process. Another process could take it in between, which
 * is rare enough on a test machine that callers simply fail loudly if it happens.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      if (address === null || typeof address === "string") {
        server.close();
        reject(new Error("could not read the port the OS assigned"));
        return;
      }
      const { port } = address;
      server.close((error) => (error ? reject(error) : resolve(port)));
    });
  });
}
