import type { JsonWebKey } from "node:crypto";
import { JsonText } from "@pes/contracts";
import { apiReferenceRoutes } from "./api-reference-page.js";
import { publicRoute, type Route } from "./route.js";

/**
 * `GET /openapi.json`, serialized once; `GET /docs`, the same document to read in a browser; and, only
 * when the development issuer is switched on, `GET /.well-known/jwks.json` with its public key.
 */
export function documentRoutes(deps: { openApiDocument: object; devJwks: { keys: JsonWebKey[] } | undefined }): Route[] {
  const openApi = JsonText.of(deps.openApiDocument);
  const routes = [publicRoute({ method: "get", path: "/openapi.json", auth: "none", operation: null, handle: () => openApi }), ...apiReferenceRoutes()];
  if (deps.devJwks !== undefined) {
    const jwks = JsonText.of(deps.devJwks);
    routes.push(publicRoute({ method: "get", path: "/.well-known/jwks.json", auth: "none", operation: null, handle: () => jwks }));
  }
  return routes;
}
