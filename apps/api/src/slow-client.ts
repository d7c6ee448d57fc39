import type { ServerResponse } from "node:http";

/** True once the client can no longer receive the answer: its connection closed, or the answer ended. */
export function clientGone(res: ServerResponse): boolean {
  return res.destroyed || res.writableEnded || res.socket === null || res.socket.destroyed;
}

/**
 * Writes `chunk` and waits until the client has taken what is buffered (`drain`) when write() asks for
 * it, so that a client that reads slowly or not at all holds at most a socket buffer of the answer, not
 * all of it. A client that takes nothing for `stallTimeoutMs` is disconnected. Otherwise yields to the
 * event loop once, so a long answer written slice by slice leaves room for other requests between
 * slices. Resolves false when the client is gone (the caller stops writing), true when it may go on.
 */
export async function writeWithBackpressure(res: ServerResponse, chunk: string, stallTimeoutMs: number): Promise<boolean> {
  if (clientGone(res)) return false;
  if (res.write(chunk)) {
    await new Promise((resolve) => setImmediate(resolve));
    return !clientGone(res);
  }
  return new Promise<boolean>((resolve) => {
    const settle = (writable: boolean) => {
      clearTimeout(stall);
      res.off("drain", onDrain);
      res.off("close", onClose);
      resolve(writable);
    };
    const onDrain = () => settle(!clientGone(res));
    const onClose = () => settle(false);
    const stall = setTimeout(() => {
      res.destroy();
      settle(false);
    }, stallTimeoutMs);
    res.on("drain", onDrain);
    res.on("close", onClose);
  });
}
