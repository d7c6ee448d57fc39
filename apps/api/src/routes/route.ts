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

export interface PublicContext {
  req: Request;
  res: Response;
  requestId: string;
}

export interface OrganizationContext<Body> extends PublicContext {
  caller: Caller;
  body: Body;
}

interface RouteBase {
  method: "get" | "post";
  path: string;
}

/** A route anybody may call (health, documents). */
export interface PublicRouteDeclaration extends RouteBase {
  auth: "none";
  handle(context: PublicContext): unknown;
}

/**
 * A route for an authenticated caller of a configured organization. With `body`, the request must be
 * JSON and is parsed with that schema before `handle` runs; either failure is answered here, once.
 */
export interface OrganizationRouteDeclaration<Body> extends RouteBase {
  auth: "organization";
  body?: z.ZodType<Body>;
  handle(context: OrganizationContext<Body>): unknown;
}

/** What routes need from the app to authenticate and read bodies. */
export interface RouteRuntime {
  catalog: Catalog;
  verifier: TokenVerifier;
  /** BODY_LIMIT, e.g. "1mb". */
  bodyLimit: string;
}

/** A declared route, ready to mount: its handle's result (JSON text as it is) becomes the 200 body. */
export interface Route {
  method: "get" | "post";
  path: string;
  toHandler(runtime: RouteRuntime): RequestHandler;
}

/** Declares a route that needs no token. */
export function publicRoute(declaration: PublicRouteDeclaration): Route {
  return {
    method: declaration.method,
    path: declaration.path,
    toHandler: () => async (req, res) => {
      reply(res, await declaration.handle({ req, res, requestId: requestIdOf(req) }));
    },
  };
}

/** Declares a route for an organization's caller: authenticate, then read and validate the body, then handle. */
export function organizationRoute(declaration: OrganizationRouteDeclaration<undefined> & { body?: undefined }): Route;
export function organizationRoute<Body>(declaration: OrganizationRouteDeclaration<Body> & { body: z.ZodType<Body> }): Route;
export function organizationRoute(declaration: OrganizationRouteDeclaration<unknown>): Route {
  return {
    method: declaration.method,
    path: declaration.path,
    toHandler: (runtime) => {
      const readJson = jsonBodyReader(runtime.bodyLimit);
      return async (req, res) => {
        // Authenticate before reading a byte of the body: unauthenticated callers cost no parsing.
        const caller = await authenticate(req.headers.authorization, runtime.verifier, runtime.catalog);
        const body = declaration.body === undefined ? undefined : parseOrThrow(declaration.body, await readJson(req, res));
        reply(res, await declaration.handle({ req, res, requestId: requestIdOf(req), caller, body }));
      };
    },
  };
}

function reply(res: ServerResponse, result: unknown): void {
  if (result instanceof JsonText) sendSerializedJson(res, 200, result.text);
  else sendJson(res, 200, result);
}
