import { once } from "node:events";
import { createConnection, createServer, type Server, type Socket } from "node:net";

/**
 * A TCP proxy on 127.0.0.1 in front of a service, so that a test can cut the network between a client
 * and it: `cut()` resets every connection through it and stops listening (a client's next connection
 * is refused), `restore()` listens again on the same port.
 */
export interface TcpProxy {
  url: string;
  /** Connections accepted so far. */
  readonly accepted: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  };
  const listen = async (port: number): Promise<Server> => {
    const server = createServer((client) => {
      accepted += 1;
      const upstream = createConnection(target);
      track(client);
      track(upstream);
      client.pipe(upstream);
      upstream.pipe(client);
      // Either side going away takes the other with it, as a reset would.
      client.on("error", () => upstream.destroy());
      upstream.on("error", () => client.destroy());
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
    });
    server.listen(port, "127.0.0.1");
    await once(server, "listening");
    return server;
  };

  let server: Server | undefined = await listen(0);
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the proxy has no port");
  const { port } = address;

  const cut = async () => {
    const closing = server;
    server = undefined;
    if (closing === undefined) return;
    const closed = new Promise<void>((resolve) => closing.close(() => resolve()));
    for (const socket of sockets) socket.resetAndDestroy();
    await closed;
  };
  return {
    url: `http://127.0.0.1:${port}`,
    get accepted() {
      return accepted;
    },
    cut,
    async restore() {
      server ??= await listen(port);
    },
    close: cut,
  };
}
