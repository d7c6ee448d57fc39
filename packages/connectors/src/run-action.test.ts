import { afterAll, afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { ConnectorDefinition } from "./connector-definition.js";
import { NO_SECRETS, resolveSecrets } from "./data-source-secrets.js";
import { prepareAction, runAction, runConnectorAction } from "./run-action.js";
import { createHttpClient } from "./undici-http-client.js";
import { connectorRegistry } from "./stock-connectors.js";
import { sendJson, startTestHttpServer, type TestHttpServer } from "@pes/local-services";

const window = { start: new Date("2026-11-20T13:08:00Z"), time: new Date("2026-11-20T14:08:00Z"), end: new Date("2026-11-20T14:23:00Z") };

describe("runAction", () => {
  const http = createHttpClient();
  let server: TestHttpServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });
  afterAll(async () => {
    await http.close();
  });

  it("runs each request with the connector of its data source's type", async () => {
    server = await startTestHttpServer((seen, response) =>
      seen.url.startsWith("/api/v1/")
        ? sendJson(response, 200, { status: "success", data: { resultType: "scalar", result: [1, "42"] } })
        : sendJson(response, 200, { answer: "from http" }),
    );
    const prepare = (dataSource: { type: string; url: string }, query: unknown) => {
      const connector = connectorRegistry.get(dataSource.type);
      if (connector === undefined) throw new Error(`no connector ${dataSource.type}`);
      return prepareAction(connector, dataSource, query, { secrets: NO_SECRETS, http });
    };
    const requests = [
      {
        title: "scalar",
        action: prepare({ type: "prometheus", url: server.url }, { query: "42", range: false }),
        attributes: {},
        window,
        signal: AbortSignal.timeout(5_000),
      },
      {
        title: "api",
        action: prepare({ type: "http", url: server.url }, { method: "GET", path: "/x", answerField: "answer" }),
        attributes: {},
        window,
        signal: AbortSignal.timeout(5_000),
      },
    ];
    const outcomes = await Promise.all(requests.map(async (request) => (await runAction(request)).observation));
    expect(outcomes).toEqual([
      { kind: "prometheus", data: { resultType: "scalar", result: [1, "42"] } },
      { kind: "json", answer: { answer: "from http" }, answerField: "answer" },
    ]);
    expect(server.requests.map((seen) => `${seen.method} ${seen.url}`).sort()).toEqual(["GET /x", "POST /api/v1/query"]);
  });

  it("takes the data source's secrets out of what a runtime throws, before the engine logs it", async () => {
    const token = "s3cret-token-value";
    const dataSource = { type: "toy", url: "http://127.0.0.1:1", auth: { env: "TOY_TOKEN" } };
    const { secrets } = resolveSecrets(dataSource, { env: { TOY_TOKEN: token } });
    const definition: ConnectorDefinition<typeof dataSource, Record<string, never>> = {
      type: "toy",
      noun: "a toy data source",
      builds: "request",
      dataSource: z.object({ type: z.literal("toy"), url: z.string(), auth: z.object({ env: z.string() }) }),
      query: z.object({}),
      templates: [],
      link: () => undefined,
      runtime: async () => ({
        fetch: async () => {
          throw new TypeError(`cannot send Bearer ${token} to the toy`);
        },
      }),
    };
    const thrown = await runConnectorAction(definition, await definition.runtime(), {
      title: "toy",
      attributes: {},
      window,
      signal: AbortSignal.timeout(5_000),
      secrets,
      http,
      dataSource,
      spec: {},
    }).catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(Error);
    expect(thrown).toMatchObject({ name: "TypeError", message: "cannot send Bearer [redacted] to the toy" });
    expect(thrown instanceof Error ? thrown.stack : "").not.toContain(token);
  });
});
