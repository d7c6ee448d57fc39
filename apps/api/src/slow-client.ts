import type { ServerResponse } from "node:http";

/** True once the client can no longer receive the answer: its connection closed, or the answer ended. */
export function clientGone(res: ServerResponse): boolean {
  return res.destroyed || res.writableEnded || res.socket === null || res.socket.destroyed;
}
