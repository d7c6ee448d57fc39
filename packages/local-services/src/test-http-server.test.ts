import { afterEach, describe, expect, it } from "vitest";
import { sendJson, startTestHttpServer, type TestHttpServer } from "./test-http-server.js";

describe("startTestHttpServer", () => {
  let server: TestHttpServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it("records each request with its body and answers with the handler", async () => {
    server = await startTestHttpServer((seen, response) => sendJson(response, 201, { echo: seen.body }));
    const response = await fetch(`${server.url}/api?x=1`, { method: "POST", headers: { "x-test": "yes" }, body: "query=up" });
    expect(response.status).toBe(201);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(await response.json()).toEqual({ echo: "query=up" });
    expect(server.requests).toEqual([
      { method: "POST", url: "/api?x=1", headers: expect.objectContaining({ "x-test": "yes" }), body: "query=up", bytes: Buffer.from("query=up") },
    ]);
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
  });

  it("holds requests until released, and answers later ones at once", async () => {
    server = await startTestHttpServer((_seen, response) => sendJson(response, 200, { ok: true }), { hold: true });
    const first = fetch(server.url);
    await server.waitForRequests(1);
    let answered = false;
    void first.then(() => {
      answered = true;
    });
    // A request that arrives while holding is recorded but not answered.
    const second = fetch(server.url);
    await server.waitForRequests(2);
    expect(answered).toBe(false);
    server.release();
    expect((await first).status).toBe(200);
    expect((await second).status).toBe(200);
    expect((await fetch(server.url)).status).toBe(200);
  });

  it("counts requests their client gave up on, and does not handle them on release", async () => {
    let handled = 0;
    server = await startTestHttpServer((_seen, response) => {
      handled += 1;
      sendJson(response, 200, {});
    });
    server.hold();
    const controller = new AbortController();
    const abandoned = fetch(server.url, { signal: controller.signal }).catch(() => "aborted");
    await server.waitForRequests(1);
    controller.abort();
    await server.waitForAbandoned(1);
    expect(await abandoned).toBe("aborted");
    server.release();
    expect((await fetch(server.url)).status).toBe(200);
    expect(handled).toBe(1);
  });

  it("drops held connections on close, and can listen again on the same port", async () => {
    const first = await startTestHttpServer(() => undefined);
    const pending = fetch(first.url).then(
      () => "answered",
      () => "dropped",
    );
    await first.waitForRequests(1);
    await first.close();
    await first.close();
    expect(await pending).toBe("dropped");

    server = await startTestHttpServer((_seen, response) => sendJson(response, 200, { back: true }), { port: first.port });
    expect(server.url).toBe(first.url);
    expect(await (await fetch(server.url)).json()).toEqual({ back: true });
  });

  it("drops the connection of a request whose handler throws", async () => {
    server = await startTestHttpServer(() => {
      throw new Error("handler bug");
    });
    await expect(fetch(server.url)).rejects.toThrow();
  });
});
