import { sendJson, startTestHttpServer, type TestHttpServer } from "@pes/local-services";
import type { AuditSentRequest } from "@pes/contracts";
import { createSlackPostClient } from "@pes/integrations";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordOutbound } from "./outbound-requests.js";

let chat: TestHttpServer;
let model: TestHttpServer;
let dataSource: TestHttpServer;

beforeAll(async () => {
  const answer = (status: number) => (_request: unknown, response: Parameters<typeof sendJson>[0]) => sendJson(response, status, { ok: true });
  chat = await startTestHttpServer(answer(200));
  model = await startTestHttpServer(answer(503));
  dataSource = await startTestHttpServer(answer(200));
});
afterAll(async () => {
  await Promise.all([chat.close(), model.close(), dataSource.close()]);
});

describe("recordOutbound", () => {
  it("records each request of a run to its destinations, with the bytes of its body and its status, apart from a run alongside", async () => {
    const destinations = [
      { service: "slack", origin: chat.url },
      { service: "language-model", origin: model.url },
    ];
    const first: AuditSentRequest[] = [];
    const second: AuditSentRequest[] = [];
    const body = JSON.stringify({ prompt: "é".repeat(10) });

    await Promise.all([
      recordOutbound(destinations, first, async () => {
        // The Slack client, fetch and undici's request: every HTTP client the worker uses.
        await createSlackPostClient({ token: "xoxb-outbound-test", apiUrl: `${chat.url}/api/` }).chat.postMessage({ channel: "C1", text: "found" });
        await (await fetch(`${model.url}/v1/chat/completions?key=secret-in-query`, { method: "POST", body })).text();
        await (await request(`${dataSource.url}/api/v1/query`, { method: "POST", body: "query=up" })).body.text();
      }),
      recordOutbound(destinations, second, async () => {
        await (await request(`${chat.url}/api/chat.update`, { method: "POST", body: "x".repeat(300) })).body.text();
      }),
    ]);
    await (await fetch(`${chat.url}/api/outside-any-run`, { method: "POST", body: "nobody's" })).text();

    const slackBody = chat.requests.find((seen) => seen.url === "/api/chat.postMessage")?.bytes.byteLength;
    expect(first).toEqual([
      { service: "slack", method: "POST", url: `${chat.url}/api/chat.postMessage`, bytes: slackBody, status: 200 },
      { service: "language-model", method: "POST", url: `${model.url}/v1/chat/completions`, bytes: Buffer.byteLength(body), status: 503 },
    ]);
    expect(second).toEqual([{ service: "slack", method: "POST", url: `${chat.url}/api/chat.update`, bytes: 300, status: 200 }]);
    expect(slackBody).toBeGreaterThan(0);
  });

  it("keeps what a run sent before it threw", async () => {
    const sent: AuditSentRequest[] = [];
    const run = recordOutbound([{ service: "slack", origin: chat.url }], sent, async () => {
      await (await fetch(`${chat.url}/api/chat.postMessage`, { method: "POST", body: "abc" })).text();
      throw new Error("failed after posting");
    });

    await expect(run).rejects.toThrow("failed after posting");
    expect(sent).toEqual([{ service: "slack", method: "POST", url: `${chat.url}/api/chat.postMessage`, bytes: 3, status: 200 }]);
  });
});
