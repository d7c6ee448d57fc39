import type { ServerResponse } from "node:http";
import type { Catalog } from "@pes/config";
import { JsonText } from "@pes/contracts";
import type { Request, RequestHandler, Response } from "express";
import type { z } from "zod";
import { authenticate, type Caller } from "../auth/authenticate.js";
import type { TokenVerifier } from "../auth/token-verifier.js";
import { jsonBodyReader } from "../json-body.js";
import { sendJson, sendSerializedJson } from "../json-response.js";
import { requestIdOf } from "../request-id.js";
import { parseOrThrow } from "../validation.js";
import { failures, type Responses } from "./responses.js";

export interface PublicContext {
  req: Request;
  res: Response;
  requestId: string;
}

export interface OrganizationContext<Body, Query = undefined> extends PublicContext {
  caller: Caller;
  body: Body;
  query: Query;
}

/** A request header, path or query parameter a route reads, as the OpenAPI document shows it. */
export interface ParameterDeclaration {
  name: string;
  in: "header" | "path" | "query";
  description: string;
  schema: z.ZodType;
  /** Path parameters always are. */
  required?: boolean;
}

/** What the OpenAPI document says of a route besides what its kind (auth, body) implies. */
export interface OperationDeclaration {
  operationId: string;
  summary: string;
  description?: string;
  /** Path parameters (`:id` in the route's path) and request headers it reads, besides X-Request-Id. */
  parameters?: readonly ParameterDeclaration[];
  /**
   * The answers the handler gives. Those of authenticating and reading the body (401, 403, 400, 413,
   * 415, and 500 and 503 for an organization's route) are added by the route's kind.
   */
  responses: Responses;
}

interface RouteBase {
  method: "get" | "post";
  path: string;
  /** Null only for the routes that serve the document itself: they are not part of the API it describes. */
  operation: OperationDeclaration | null;
}

/** A route anybody may call (health, documents). */
export interface PublicRouteDeclaration extends RouteBase {
  auth: "none";
  handle(context: PublicContext): unknown;
}

/**
 * A route for an authenticated caller of a configured organization. With `body`, the request must be
 * JSON and is parsed with that schema before `handle` runs; with `query`, the query parameters are
 * parsed with that one (issues under `query`); each failure is answered here, once.
 */
export interface OrganizationRouteDeclaration<Body, Query = undefined> extends RouteBase {
  auth: "organization";
  body?: z.ZodType<Body>;
  /** Its largest accepted body, when it takes larger ones than BODY_LIMIT (an async batch's). */
  bodyLimit?: string;
  query?: z.ZodObject & z.ZodType<Query>;
  handle(context: OrganizationContext<Body, Query>): unknown;
}

/** What routes need from the app to authenticate and read bodies. */
export interface RouteRuntime {
  catalog: Catalog;
  verifier: TokenVerifier;
  /** BODY_LIMIT, e.g. "1mb". */
  bodyLimit: string;
}

/** A route's operation as the OpenAPI document shows it: its declaration completed by its kind. */
export interface DocumentedOperation extends OperationDeclaration {
  /** "organization": a bearer token of a configured client of the organization. */
  auth: "none" | "organization";
  /** The schema the JSON body is parsed with. */
  requestBody?: z.ZodType;
  /** The schema the query parameters are parsed with: one parameter per property. */
  query?: z.ZodObject;
}

/**
 * An answer other than a plain 200, or with headers: what a handler returns to choose them. The body is
 * sent as JSON (JSON text as it is).
 */
export class HttpReply {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {}
}

/**
 * A declared route, ready to mount: its handle's result (JSON text as it is) becomes the 200 body, or
 * the HttpReply it returns is sent as it says.
 */
export interface Route {
  method: "get" | "post";
  path: string;
  /** Undefined for a route the OpenAPI document leaves out. */
  operation: DocumentedOperation | undefined;
  toHandler(runtime: RouteRuntime): RequestHandler;
}

/** Declares a route that needs no token. */
export function publicRoute(declaration: PublicRouteDeclaration): Route {
  const { operation } = declaration;
  return {
    method: declaration.method,
    path: declaration.path,
    operation: operation === null ? undefined : { ...operation, auth: "none" },
    toHandler: () => async (req, res) => {
      reply(res, await declaration.handle({ req, res, requestId: requestIdOf(req) }));
    },
  };
}

/** Declares a route for an organization's caller: authenticate, then read and validate the body, then handle. */
export function organizationRoute<Query = undefined>(declaration: OrganizationRouteDeclaration<undefined, Query> & { body?: undefined }): Route;
export function organizationRoute<Body, Query = undefined>(declaration: OrganizationRouteDeclaration<Body, Query> & { body: z.ZodType<Body> }): Route;
export function organizationRoute(declaration: OrganizationRouteDeclaration<unknown, unknown>): Route {
  const { operation, body: bodySchema, query: querySchema } = declaration;
  return {
    method: declaration.method,
    path: declaration.path,
    operation:
      operation === null
        ? undefined
        : {
            ...operation,
            auth: "organization",
            ...(bodySchema === undefined ? {} : { requestBody: bodySchema }),
            ...(querySchema === undefined ? {} : { query: querySchema }),
            responses: {
              ...failures("unauthenticated", "forbidden", "internal", "service_unavailable"),
              ...(querySchema === undefined ? {} : failures("validation")),
              ...(bodySchema === undefined ? {} : failures("validation", "payload_too_large", "unsupported_media_type")),
              ...operation.responses,
            },
          },
    toHandler: (runtime) => {
      const readJson = jsonBodyReader(declaration.bodyLimit ?? runtime.bodyLimit);
      return async (req, res) => {
        // Authenticate before reading a byte of the body: unauthenticated callers cost no parsing.
        const caller = await authenticate(req.headers.authorization, runtime.verifier, runtime.catalog);
        const query = querySchema === undefined ? undefined : parseOrThrow(querySchema, req.query, ["query"]);
        const body = bodySchema === undefined ? undefined : parseOrThrow(bodySchema, await readJson(req, res));
        reply(res, await declaration.handle({ req, res, requestId: requestIdOf(req), caller, body, query }));
      };
    },
  };
}

/** What a handler returns when it answered on its own (an event stream): nothing is left to send. */
export const ANSWERED: unique symbol = Symbol("answered");

function reply(res: ServerResponse, result: unknown): void {
  if (result === ANSWERED) return;
  const { status, body, headers } = result instanceof HttpReply ? result : { status: 200, body: result, headers: undefined };
  if (body instanceof JsonText) sendSerializedJson(res, status, body.text, headers);
  else sendJson(res, status, body, headers);
}
