import { createHash, timingSafeEqual } from "node:crypto";
import type { ServerResponse } from "node:http";
import type { Registry } from "prom-client";

/**
 * Whether a scrape may read the metrics: always when no token is configured (METRICS_TOKEN unset),
 * else only with `Authorization: Bearer <token>`. Compared as SHA-256 digests in constant time, so
 * neither the time taken nor the token's length tells a guesser anything.
 */
export function scrapeAllowed(authorization: string | undefined, token: string | undefined): boolean {
  if (token === undefined) return true;
  const match = /^Bearer +(\S+) *$/i.exec(authorization ?? "");
  if (match?.[1] === undefined) return false;
  return timingSafeEqual(digest(match[1]), digest(token));
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

/** Answers a scrape with the registry's text exposition format (`text/plain; version=0.0.4`). */
export async function sendMetrics(res: ServerResponse, registry: Registry): Promise<void> {
  const text = await registry.metrics();
  res.statusCode = 200;
  res.setHeader("Content-Type", registry.contentType);
  res.setHeader("Cache-Control", "no-store");
  res.end(text);
}
