import { ErrorResponse, Playbook } from "@pes/contracts";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { buildOpenApiDocument } from "./openapi.js";
import { failures } from "./routes/responses.js";
import { organizationRoute, publicRoute } from "./routes/route.js";

const Echo = z.object({ text: z.string() }).meta({ id: "TestEcho" });

describe("buildOpenApiDocument", () => {
  it("takes each operation from its route's declaration, completed by the route's kind", () => {
    const routes = [
      organizationRoute({
        method: "post",
        path: "/echo",
        auth: "organization",
        body: Echo,
        operation: {
          operationId: "echo",
          summary: "Echo",
          responses: { 200: { description: "The same.", body: Echo }, ...failures("too_many_requests") },
        },
        handle: ({ body }) => body,
      }),
      organizationRoute({
        method: "get",
        path: "/echo",
        auth: "organization",
        operation: { operationId: "lastEcho", summary: "Last echo", responses: { 200: { description: "It.", body: Playbook } } },
        handle: () => ({}),
      }),
      publicRoute({
        method: "get",
        path: "/ping",
        auth: "none",
        operation: { operationId: "ping", summary: "Ping", responses: { 200: { description: "Pong.", body: z.object({ pong: z.boolean() }) } } },
        handle: () => ({ pong: true }),
      }),
      publicRoute({ method: "get", path: "/document", auth: "none", operation: null, handle: () => ({}) }),
    ];
    const document = buildOpenApiDocument(routes, { batchMaxItems: 3 }) as {
      paths: Record<string, Record<string, Record<string, unknown>>>;
      components: { schemas: Record<string, unknown> };
    };

    expect(Object.keys(document.paths).sort()).toEqual(["/echo", "/ping"]);
    const post = document.paths["/echo"]?.post;
    expect(post).toMatchObject({
      operationId: "echo",
      security: [{ bearerAuth: [] }],
      parameters: [{ name: "X-Request-Id", in: "header" }],
      requestBody: { required: true, content: { "application/json": { schema: { $ref: "#/components/schemas/TestEcho" } } } },
    });
    // Authentication and body reading add their answers; the declaration adds its own.
    expect(Object.keys(post?.responses ?? {}).sort()).toEqual(["200", "400", "401", "403", "413", "415", "429", "500", "503"]);
    expect(post?.responses).toMatchObject({
      "429": { headers: { "Retry-After": { schema: { type: "integer" } } } },
      "400": { content: { "application/json": { schema: { $ref: "#/components/schemas/ValidationError" } } } },
    });
    expect(Object.keys(document.paths["/echo"]?.get?.responses ?? {}).sort()).toEqual(["200", "401", "403", "500", "503"]);
    expect(document.paths["/ping"]?.get).toEqual({
      operationId: "ping",
      summary: "Ping",
      security: [],
      responses: {
        "200": {
          description: "Pong.",
          content: {
            "application/json": {
              schema: { type: "object", properties: { pong: { type: "boolean" } }, required: ["pong"] },
            },
          },
        },
      },
    });
    // Only the components the paths reach, nested ones included; none of the API's own that no route names.
    expect(Object.keys(document.components.schemas).sort()).toEqual(["ErrorResponse", "Playbook", "TestEcho", "ValidationError", "ValidationIssue"]);
  });

  it("refuses an inline schema that nests one with an id (its $ref would point nowhere)", () => {
    const route = publicRoute({
      method: "get",
      path: "/bad",
      auth: "none",
      operation: { operationId: "bad", summary: "Bad", responses: { 200: { description: "x", body: z.object({ inner: ErrorResponse }) } } },
      handle: () => ({}),
    });
    expect(() => buildOpenApiDocument([route], { batchMaxItems: 1 })).toThrow(/give it an id/);
  });
});
