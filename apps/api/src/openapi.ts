import {
  ActionableMitigation,
  ActionResult,
  BatchExecutionInput,
  BatchExecutionResult,
  ErrorResponse,
  GadgetHighlights,
  Playbook,
  PlaybookExecutionInput,
  PlaybookExecutionResult,
  PlaybookList,
  ValidationError,
  ValidationIssue,
} from "@pes/contracts";
import { z } from "zod";

/** The contract schemas published as components, each under its `.meta({ id })`. */
const COMPONENT_SCHEMAS: readonly z.ZodType[] = [
  ErrorResponse,
  ValidationIssue,
  ValidationError,
  PlaybookExecutionInput,
  BatchExecutionInput,
  PlaybookExecutionResult,
  BatchExecutionResult,
  GadgetHighlights,
  ActionableMitigation,
  ActionResult,
  Playbook,
  PlaybookList,
];

type JsonObject = Record<string, unknown>;

const ref = (id: string): JsonObject => ({ $ref: `#/components/schemas/${id}` });

const errorResponses: Record<string, string> = {
  "401": "Missing, malformed, expired or otherwise invalid bearer token.",
  "403": "Client ID is not configured for the organization (the API is not enabled for it, or not for this client).",
  "413": "Request body larger than the configured limit.",
  "415": "Content-Type is not application/json.",
  "429": "Too many executions in flight on this instance; retry after the Retry-After seconds.",
  "500": "Internal server error; details are only in the service's logs.",
  "503": "A dependency (the job queue or the identity provider's keys) cannot be reached.",
};

function jsonContent(schema: JsonObject): JsonObject {
  return { content: { "application/json": { schema } } };
}

function failures(statuses: readonly string[]): Record<string, JsonObject> {
  const responses: Record<string, JsonObject> = {};
  for (const status of statuses) {
    const description = errorResponses[status] ?? "Error.";
    const response: JsonObject = { description, ...jsonContent(ref("ErrorResponse")) };
    // 429 always says when to come back; 503 does when the identity provider's keys cannot be had.
    if (status === "429" || status === "503") {
      response.headers = { "Retry-After": { schema: { type: "integer" }, description: "Seconds to wait." } };
    }
    responses[status] = response;
  }
  return responses;
}

const validationFailure = {
  "400": {
    description: "The body breaks the input rules: a list of issues with paths starting at body, or a string when it is not JSON.",
    ...jsonContent(ref("ValidationError")),
  },
};

const requestId = {
  name: "X-Request-Id",
  in: "header",
  required: false,
  description: "Correlation id (1-128 of A-Z a-z 0-9 . _ -), echoed in the response; generated when absent.",
  schema: { type: "string", pattern: "^[A-Za-z0-9._-]{1,128}$" },
};

/**
 * The OpenAPI 3.1 document of the API, generated from the @pes/contracts zod schemas (JSON Schema
 * 2020-12 is OpenAPI 3.1's schema dialect). Built once at start.
 */
export function buildOpenApiDocument(options: { batchMaxItems: number }): JsonObject {
  const registry = z.registry<{ id: string }>();
  for (const schema of COMPONENT_SCHEMAS) {
    const id = schema.meta()?.id;
    if (typeof id !== "string") throw new Error("every component schema needs .meta({ id })");
    registry.add(schema, { id });
  }
  const generated = z.toJSONSchema(registry, {
    uri: (id) => `#/components/schemas/${id}`,
    io: "input",
    unrepresentable: "any",
  });
  const schemas: Record<string, JsonObject> = {};
  for (const [id, schema] of Object.entries(generated.schemas)) {
    // Components are embedded in the document: no dialect or base URI of their own.
    const { $schema: _dialect, $id: _id, ...rest } = schema;
    schemas[id] = rest;
  }
  // Items are validated one by one at runtime (a bad item is that item's error); document their shape.
  const batch = schemas.BatchExecutionInput;
  const properties = batch?.properties;
  if (typeof properties === "object" && properties !== null && "inputList" in properties) {
    const inputList = properties.inputList;
    if (typeof inputList === "object" && inputList !== null) {
      Object.assign(inputList, { items: ref("PlaybookExecutionInput"), maxItems: options.batchMaxItems });
    }
  }

  const health = {
    type: "object",
    properties: { status: { type: "string", const: "ok" } },
    required: ["status"],
  };
  const secured = { security: [{ bearerAuth: [] }], parameters: [requestId] };

  return {
    openapi: "3.1.0",
    info: {
      title: "Playbook Execution Service",
      version: "1.0.0",
      description:
        "Runs playbook-based investigations of production issues and returns the findings as JSON. " +
        "A 200 result may carry `error` when the execution itself failed (for example a timeout).",
    },
    paths: {
      "/playbook/execution": {
        post: {
          operationId: "runPlaybook",
          summary: "Execute a playbook for one point in time at which an issue took place",
          ...secured,
          requestBody: { required: true, ...jsonContent(ref("PlaybookExecutionInput")) },
          responses: {
            "200": { description: "The execution completed (possibly with `error`).", ...jsonContent(ref("PlaybookExecutionResult")) },
            ...validationFailure,
            ...failures(["401", "403", "413", "415", "429", "500", "503"]),
          },
        },
      },
      "/playbook/execution/batch": {
        post: {
          operationId: "runPlaybookBatch",
          summary: "Execute playbooks for several issues in one request",
          description:
            "One result per input, in order: a PlaybookExecutionResult, or `{ error }` for an input that is invalid. " +
            `At most ${options.batchMaxItems} inputs.`,
          ...secured,
          requestBody: { required: true, ...jsonContent(ref("BatchExecutionInput")) },
          responses: {
            "200": { description: "One result per input, in input order.", ...jsonContent(ref("BatchExecutionResult")) },
            ...validationFailure,
            ...failures(["401", "403", "413", "415", "429", "500", "503"]),
          },
        },
      },
      "/playbook": {
        get: {
          operationId: "listPlaybooks",
          summary: "List the playbooks available to the caller's organization",
          ...secured,
          responses: {
            "200": { description: "The organization's playbooks.", ...jsonContent(ref("PlaybookList")) },
            ...failures(["401", "403", "500", "503"]),
          },
        },
      },
      "/healthz": {
        get: {
          operationId: "health",
          summary: "Liveness",
          security: [],
          responses: { "200": { description: "The process is up.", ...jsonContent(health) } },
        },
      },
      "/readyz": {
        get: {
          operationId: "ready",
          summary: "Readiness: configuration loaded and the job queue reachable",
          security: [],
          responses: {
            "200": { description: "Ready to take executions.", ...jsonContent(health) },
            ...failures(["503"]),
          },
        },
      },
    },
    components: {
      schemas,
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
