import type { ServerResponse } from "node:http";
import type { Catalog } from "@pes/config";
import express, { type Request, type RequestHandler, type Response } from "express";
import type { z } from "zod";
import { authenticate, type Caller } from "../auth/authenticate.js";
import type { TokenVerifier } from "../auth/token-verifier.js";
import { AppError } from "../errors.js";
import { sendJson, sendSerializedJson } from "../json-response.js";
import { requestIdOf } from "../request-id.js";
import { parseOrThrow } from "../validation.js";

/** A body serialized once (at start or per org) and sent as is on every request. */
export class PreSerialized {
  constructor(readonly json: string) {}
}

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
  /** BODY_LIMIT, as Express' JSON parser reads it ("1mb"). */
  bodyLimit: string;
}

/** A declared route, ready to mount: its handle's result (or PreSerialized) becomes the 200 body. */
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
  if (result instanceof PreSerialized) sendSerializedJson(res, 200, result.json);
  else sendJson(res, 200, result);
}

/**
 * Reads a JSON body with Express' parser, turning its failures into the API's answers: 415 for another
 * content type, 413 over the limit, 400 with the parser's message (a string, not an issue list) for
 * malformed JSON.
 */
function jsonBodyReader(limit: string): (req: Request, res: Response) => Promise<unknown> {
  const parser = express.json({ limit, strict: true });
  return (req, res) => {
    if (!isJsonContentType(req.headers["content-type"])) {
      return Promise.reject(new AppError("unsupported_media_type", "Content-Type must be application/json"));
    }
    return new Promise((resolve, reject) => {
      parser(req, res, (error?: unknown) => {
        if (error === undefined || error === null) resolve(req.body);
        else reject(bodyError(error, limit));
      });
    });
  };
}

function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  const semicolon = header.indexOf(";");
  const mediaType = (semicolon === -1 ? header : header.slice(0, semicolon)).trim().toLowerCase();
  return mediaType === "application/json";
}

function bodyError(error: unknown, limit: string): unknown {
  if (typeof error !== "object" || error === null) return error;
  const type = "type" in error ? error.type : undefined;
  const message = error instanceof Error ? error.message : "Request body could not be read";
  if (type === "entity.too.large") return new AppError("payload_too_large", `Request body exceeds the limit of ${limit}`);
  if (type === "charset.unsupported" || type === "encoding.unsupported") return new AppError("unsupported_media_type", message);
  if (type === "entity.parse.failed") return new AppError("validation", `Malformed JSON: ${message}`);
  return error;
}
