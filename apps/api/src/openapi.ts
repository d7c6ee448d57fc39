import { BatchExecutionInput, PlaybookExecutionInput } from "@pes/contracts";
import { z } from "zod";
import { RequestIdHeader } from "./request-id.js";
import type { Responses } from "./routes/responses.js";
import type { DocumentedOperation, Route } from "./routes/route.js";

type JsonObject = Record<string, unknown>;

const COMPONENTS = "#/components/schemas/";
const ref = (id: string): JsonObject => ({ $ref: `${COMPONENTS}${id}` });

const conversion = { io: "input", unrepresentable: "any" } as const;

/** A schema as the document shows it: a reference to its component when it has an id, else inline. */
function schemaObject(schema: z.ZodType): JsonObject {
  const id = z.globalRegistry.get(schema)?.id;
  if (id !== undefined) return ref(id);
  const { $schema: _dialect, ...inline } = z.toJSONSchema(schema, conversion);
  // An inline schema's own $defs would be resolved against the document's root, where they are not.
  if ("$defs" in inline) throw new Error("a schema shown inline must not nest schemas with an id: give it an id too");
  return inline;
}

function jsonContent(schema: z.ZodType): JsonObject {
  return { content: { "application/json": { schema: schemaObject(schema) } } };
}

function responseObjects(responses: Responses): JsonObject {
  const objects: JsonObject = {};
  for (const [status, response] of Object.entries(responses)) {
    const object: JsonObject = { description: response.description };
    if (response.body !== undefined) Object.assign(object, jsonContent(response.body));
    if (response.images !== undefined) {
      object.content = Object.fromEntries(response.images.map((type) => [type, { schema: { type: "string", contentMediaType: type } }]));
    }
    if (response.eventStream !== undefined) {
      const content = (object.content ?? {}) as JsonObject;
      object.content = { ...content, "text/event-stream": { schema: { type: "string", description: response.eventStream } } };
    }
    if (response.headers !== undefined) {
      object.headers = Object.fromEntries(
        Object.entries(response.headers).map(([name, header]) => [name, { schema: schemaObject(header.schema), description: header.description }]),
      );
    }
    objects[status] = object;
  }
  return objects;
}

const requestIdParameter = {
  name: "X-Request-Id",
  in: "header",
  required: false,
  description: "Correlation id (1-128 of A-Z a-z 0-9 . _ -), echoed in the response; generated when absent.",
  schema: schemaObject(RequestIdHeader),
};

/** One query parameter per property of the route's query schema, described by its `.meta`. */
function queryParameters(query: z.ZodObject | undefined): JsonObject[] {
  if (query === undefined) return [];
  return Object.entries(query.shape).map(([name, schema]) => {
    const { description, ...rest } = schemaObject(schema);
    return {
      name,
      in: "query",
      required: !schema.safeParse(undefined).success,
      ...(typeof description === "string" ? { description } : {}),
      schema: rest,
    };
  });
}

function operationObject(operation: DocumentedOperation): JsonObject {
  const declared = [
    ...(operation.parameters ?? []).map(({ name, in: where, description, schema, required }) => ({
      name,
      in: where,
      required: where === "path" || required === true,
      description,
      schema: schemaObject(schema),
    })),
    ...queryParameters(operation.query),
  ];
  return {
    operationId: operation.operationId,
    summary: operation.summary,
    ...(operation.description === undefined ? {} : { description: operation.description }),
    ...(operation.auth === "organization"
      ? { security: [{ bearerAuth: [] }], parameters: [requestIdParameter, ...declared] }
      : { security: [], ...(declared.length === 0 ? {} : { parameters: declared }) }),
    ...(operation.requestBody === undefined ? {} : { requestBody: { required: true, ...jsonContent(operation.requestBody) } }),
    responses: responseObjects(operation.responses),
  };
}

/**
 * The contract schemas the paths reach (through `$ref`s, transitively), each generated under its
 * `.meta({ id })` as JSON Schema 2020-12, OpenAPI 3.1's schema dialect.
 */
function componentSchemas(paths: JsonObject, options: { batchMaxItems: number }): Record<string, JsonObject> {
  const generated = z.toJSONSchema(z.globalRegistry, {
    ...conversion,
    uri: (id) => `${COMPONENTS}${id}`,
    override: ({ zodSchema, jsonSchema }) => {
      // Items are validated one by one at runtime (a bad item is that item's error); document their shape.
      if (zodSchema === BatchExecutionInput.shape.inputList) {
        Object.assign(jsonSchema, { items: schemaObject(PlaybookExecutionInput), maxItems: options.batchMaxItems });
      }
    },
  });
  const schemas: Record<string, JsonObject> = {};
  const pending = referencedIds(paths);
  for (let id = pending.pop(); id !== undefined; id = pending.pop()) {
    const schema = generated.schemas[id];
    if (schema === undefined) throw new Error(`no schema with id ${id}`);
    if (id in schemas) continue;
    // Components are embedded in the document: no dialect or base URI of their own.
    const { $schema: _dialect, $id: _id, ...rest } = schema;
    schemas[id] = rest;
    pending.push(...referencedIds(rest));
  }
  return Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b)));
}

function referencedIds(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(referencedIds);
  if (typeof value !== "object" || value === null) return [];
  return Object.entries(value).flatMap(([name, child]) =>
    name === "$ref" && typeof child === "string" && child.startsWith(COMPONENTS) ? [child.slice(COMPONENTS.length)] : referencedIds(child),
  );
}

/**
 * The OpenAPI 3.1 document of the API, derived from the routes' declarations (auth, request and
 * response schemas) and the @pes/contracts zod schemas they name. Built once at start.
 */
export function buildOpenApiDocument(routes: readonly Route[], options: { batchMaxItems: number }): JsonObject {
  const paths: Record<string, JsonObject> = {};
  for (const route of routes) {
    if (route.operation === undefined) continue;
    // Express writes a path parameter `:id`, OpenAPI `{id}`.
    const documented = route.path.replace(/:(\w+)/g, "{$1}");
    const path = paths[documented] ?? {};
    path[route.method] = operationObject(route.operation);
    paths[documented] = path;
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Playbook Execution Service",
      version: "1.0.0",
      description:
        "Runs playbook-based investigations of production issues and returns the findings as JSON. " +
        "A 200 result may carry `error` when the execution itself failed (for example a timeout).\n\n" +
        "# Authentication\n\n" +
        "Every operation but the health checks needs an access token of the identity provider. " +
        "This document and its reference at /docs need none.\n\n" +
        // Where Redoc (/docs) shows the security schemes; other renderers see an HTML comment.
        "<!-- ReDoc-Inject: <security-definitions> -->",
    },
    paths,
    components: {
      schemas: componentSchemas(paths, options),
      securitySchemes: {
        bearerAuth: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "JWT",
          description: "An access token of the identity provider; its org claim names the organization.",
        },
      },
    },
    security: [{ bearerAuth: [] }],
  };
}
