import type { JsonWebKey } from "node:crypto";
import { PreSerialized, publicRoute, type Route } from "./route.js";

/**
 * `GET /openapi.json`, serialized once; and, only when the development issuer is switched on,
 * `GET /.well-known/jwks.json` with its public key.
 */
export function documentRoutes(deps: { openApiDocument: object; devJwks: { keys: JsonWebKey[] } | undefined }): Route[] {
  const openApi = new PreSerialized(JSON.stringify(deps.openApiDocument));
  const routes = [publicRoute({ method: "get", path: "/openapi.json", auth: "none", handle: () => openApi })];
  if (deps.devJwks !== undefined) {
    const jwks = new PreSerialized(JSON.stringify(deps.devJwks));
    routes.push(publicRoute({ method: "get", path: "/.well-known/jwks.json", auth: "none", handle: () => jwks }));
  }
  return routes;
}
