import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { RequestHandler } from "express";
import type { Route } from "./route.js";

/**
 * Redoc's standalone bundle (React and its styles in one file), copied into dist/docs/ by the build
 * (`scripts/copy-redoc-bundle.mjs`, which also swaps its one CDN address, a logo, for an empty image) so
 * that the page needs no network but this API's and the production install needs no `redoc`. The same
 * path from src/routes/ and dist/routes/.
 */
const REDOC_BUNDLE = fileURLToPath(new URL("../../dist/docs/redoc.standalone.js", import.meta.url));

/** Where the page loads the bundle from. */
const REDOC_PATH = "/docs/redoc.standalone.js";

/**
 * Only this origin's script and document. Redoc's search index runs in a worker it starts from a blob.
 * Styles must be allowed inline: the bundle injects its stylesheets at load, before Redoc's `nonce`
 * option could tag them (Chromium refuses them with a nonce-only policy, and Redoc fails).
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src blob:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

// The empty icon spares the browser a request for /favicon.ico (a 404).
const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Playbook Execution Service API</title>
<link rel="icon" href="data:,">
</head>
<body>
<redoc spec-url="/openapi.json"></redoc>
<script src="${REDOC_PATH}"></script>
</body>
</html>
`;

const servePage: RequestHandler = (_req, res) => {
  res
    .set({
      "Content-Security-Policy": CONTENT_SECURITY_POLICY,
      "X-Content-Type-Options": "nosniff",
      "Referrer-Policy": "no-referrer",
      "Cache-Control": "no-store",
    })
    .type("html")
    .send(PAGE);
};

let bundle: Promise<Buffer> | undefined;

/** The bundle as served, read on first use (1 MB that an API nobody reads the docs of need not hold). */
function redocBundle(): Promise<Buffer> {
  bundle ??= readFile(REDOC_BUNDLE).catch((error: unknown) => {
    bundle = undefined;
    throw error;
  });
  return bundle;
}

const serveBundle: RequestHandler = async (_req, res) => {
  const body = await redocBundle();
  // It changes only with a build: an hour's caching spares reloads, an upgrade shows within the hour.
  res.set({ "Cache-Control": "public, max-age=3600", "X-Content-Type-Options": "nosniff" }).type("js").send(body);
};

/**
 * `GET /docs`: an interactive reference (Redoc) of `/openapi.json`, and the script it runs. Like the
 * document, it needs no token. Not part of the document it shows.
 */
export function apiReferenceRoutes(): Route[] {
  // Checked when the app is built: a missing bundle stops the process instead of serving a blank page.
  if (!existsSync(REDOC_BUNDLE)) {
    throw new Error(`${REDOC_BUNDLE} is missing: \`npm run build\` in apps/api copies it from the redoc package`);
  }
  return [
    { method: "get", path: "/docs", operation: undefined, toHandler: () => servePage },
    { method: "get", path: REDOC_PATH, operation: undefined, toHandler: () => serveBundle },
  ];
}
