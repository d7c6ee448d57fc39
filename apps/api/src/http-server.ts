import { createServer, IncomingMessage, ServerResponse, type Server } from "node:http";
import type { Socket } from "node:net";
import type { Express } from "express";

/**
 * The HTTP server of the Express app, whose requests and responses are created with the app's own
 * prototypes (`app.request`, `app.response`).
 *
 * Express gives every request and response it handles those prototypes with `Object.setPrototypeOf`. V8
 * then builds a new hidden class for each of the two objects, every time, and every property access on
 * them afterwards — in Node's http code, in Express, in ours — misses its inline cache: about 100 misses
 * per request (`node --log-ic`). Objects born with those prototypes keep one hidden class, and Express's
 * `setPrototypeOf` finds nothing to change: 392 k instead of 950 k instructions per request (callgrind).
 */
export function createHttpServer(app: Express): Server {
  // Constructors in Node's own style (Node's are functions, not classes). Not Reflect.construct with these
  // as new.target: that gave every object a new hidden class again (measured the same way). Should Node
  // make them classes, calling them without `new` throws, at the first request of any test.
  function AppRequest(this: IncomingMessage, socket: Socket): void {
    Reflect.apply(IncomingMessage, this, [socket]);
  }
  AppRequest.prototype = app.request;
  function AppResponse(this: ServerResponse, req: IncomingMessage, options?: object): void {
    Reflect.apply(ServerResponse, this, [req, options]);
  }
  AppResponse.prototype = app.response;
  // Node's types describe these options as classes. A subclass's instances would have the subclass's
  // prototype, not app.request: it would take replacing Express's app.request and app.response. The
  // function form leaves Express as it is, and is cast here once.
  return createServer(
    {
      IncomingMessage: AppRequest as unknown as typeof IncomingMessage,
      ServerResponse: AppResponse as unknown as typeof ServerResponse,
    },
    app,
  );
}
