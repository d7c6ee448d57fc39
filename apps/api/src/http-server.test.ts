import { once } from "node:events";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHttpServer } from "./http-server.js";
import { CANNED_RESULT, rsaKey, signToken, startJwksServer, testApp, type JwksServer } from "./testing/fixtures.js";

const key = rsaKey("key-1");
let jwks: JwksServer;
let server: Server;
let baseUrl: string;
let app: ReturnType<typeof testApp>["app"];
/** What the request and response were made with, seen before Express touched them. */
const born: { request?: object | null; response?: object | null } = {};

beforeAll(async () => {
  jwks = await startJwksServer([key.jwk]);
  ({ app } = testApp({ jwksUrl: jwks.url }));
  server = createHttpServer(app);
  // Runs before the app's own listener: the prototypes Node created the objects with.
  server.prependListener("request", (req: IncomingMessage, res: ServerResponse) => {
    born.request = Object.getPrototypeOf(req) as object | null;
    born.response = Object.getPrototypeOf(res) as object | null;
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await jwks.close();
});

describe("the API's HTTP server", () => {
  it("creates requests and responses with the app's prototypes, so that Express has none to change", async () => {
    const response = await fetch(`${baseUrl}/healthz`);
    expect(response.status).toBe(200);
    expect(born.request).toBe(app.request);
    expect(born.response).toBe(app.response);
  });

  it("serves an execution end to end over a real socket: token, body, request id, JSON answer", async () => {
    const response = await fetch(`${baseUrl}/playbook/execution`, {
      method: "POST",
      headers: { authorization: `Bearer ${signToken({ key })}`, "content-type": "application/json", "x-request-id": "req-42" },
      body: JSON.stringify({ bookName: "disk-full" }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-request-id")).toBe("req-42");
    expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(await response.json()).toEqual(CANNED_RESULT);
  });

  it("answers an unknown path and a malformed body as the app does", async () => {
    const missing = await fetch(`${baseUrl}/nowhere`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: "No route for GET /nowhere" });
    const malformed = await fetch(`${baseUrl}/playbook/execution`, {
      method: "POST",
      headers: { authorization: `Bearer ${signToken({ key })}`, "content-type": "application/json" },
      body: "{not json",
    });
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { error: unknown }).error).toEqual(expect.stringContaining("Malformed JSON"));
  });
});
