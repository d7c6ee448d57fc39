import { createHmac, timingSafeEqual } from "node:crypto";
import type { PlaybookExecutionResult } from "@pes/contracts";

/**
 * Links to an execution for readers that cannot send the API's bearer token (a browser, a Microsoft
 * Teams card's image): a path signed with HMAC-SHA256 over the path, the organization, the execution id
 * and the expiry, with a secret only the service knows. The link carries `org`, `exp` and `sig` in its
 * query, never a token; a link whose signature does not match (any part altered) or that has expired is
 * refused, and nothing is readable without one.
 */

/** Where the signed page of an execution is served: `/view/execution/{id}`, its charts below it. */
export const SIGNED_PAGE_PATH = "/view/execution";
/** Where an execution is read with the bearer token (`GET /playbook/execution/{id}`, its charts below it). */
const EXECUTION_PATH = "/playbook/execution";
/** A link lives this long unless configured otherwise (LINK_LIFETIME_SECONDS). */
export const DEFAULT_LINK_LIFETIME_SECONDS = 7 * 24 * 3_600;

/** A chart's image format: SVG for browsers, PNG for chat and cards. */
export type ChartFormat = "svg" | "png";

/** How links are signed: the secret and how long a link lives. */
export interface LinkSigning {
  /** LINK_SIGNING_SECRET: at least 32 characters. */
  secret: string;
  /** How long a link is valid from when it is made. */
  lifetimeSeconds: number;
}

/** Signed links, under the address people reach the API at. */
export interface LinkSettings extends LinkSigning {
  /** PUBLIC_URL: where people reach the API, e.g. `https://pes.example.com` (no trailing slash needed). */
  publicUrl: string;
}

/** The page of an execution: `/view/execution/{id}`. */
export function pagePath(executionId: string): string {
  return `${SIGNED_PAGE_PATH}/${executionId}`;
}

/** A chart of the signed page: `/view/execution/{id}/charts/{action}.svg|png`. */
export function signedChartPath(executionId: string, action: number, format: ChartFormat): string {
  return `${pagePath(executionId)}/charts/${action}.${format}`;
}

/** A chart read with the bearer token: `/playbook/execution/{id}/charts/{action}`. */
export function chartPath(executionId: string, action: number): string {
  return `${EXECUTION_PATH}/${executionId}/charts/${action}`;
}

/** `path` under `base` (PUBLIC_URL), whatever slashes the base ends with. */
export function absolute(base: string, path: string): string {
  return `${base.replace(/\/+$/, "")}${path}`;
}

/** What a link is signed for. */
export interface SignedTarget {
  path: string;
  orgId: string;
  executionId: string;
}

/**
 * `path?org=…&exp=…&sig=…`: the path signed for the organization and execution until `expiresAt`
 * (rounded down to the second).
 */
export function signPath(secret: string, target: SignedTarget, expiresAt: Date): string {
  const exp = Math.floor(expiresAt.getTime() / 1_000);
  const query = new URLSearchParams({ org: target.orgId, exp: String(exp), sig: signature(secret, target, exp) });
  return `${target.path}?${query.toString()}`;
}

/** Why a signed link is refused; `valid` when it is not. */
export type LinkCheck = "valid" | "unsigned" | "altered" | "expired";

/**
 * Checks a signed link as it arrived: its path, and the `org`, `exp` and `sig` of its query (anything
 * else in the query is ignored and signs nothing). The signature is compared in constant time, before the
 * expiry is read, so that an altered expiry is `altered`.
 */
export function checkSignedPath(
  secret: string,
  path: string,
  executionId: string,
  query: { org?: unknown; exp?: unknown; sig?: unknown },
  now: Date,
): LinkCheck {
  const { org, exp, sig } = query;
  if (typeof org !== "string" || typeof exp !== "string" || typeof sig !== "string" || org === "" || sig === "") return "unsigned";
  if (!/^\d{1,12}$/.test(exp)) return "altered";
  const expected = Buffer.from(signature(secret, { path, orgId: org, executionId }, Number(exp)));
  const given = Buffer.from(sig);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return "altered";
  return Number(exp) * 1_000 <= now.getTime() ? "expired" : "valid";
}

function signature(secret: string, target: SignedTarget, exp: number): string {
  // One field per line: a value cannot pass for another field, since none of them holds a newline that the
  // API would accept (ids and paths are checked before they are signed or verified).
  return createHmac("sha256", secret).update(`pes-link-v1\n${target.path}\n${target.orgId}\n${target.executionId}\n${exp}`).digest("base64url");
}

/** The signed links of one execution: its page and the images of its charts. */
export interface ExecutionLinks {
  pageUrl: string;
  /** One per action that has a chart (its `chartUrl` in the result), by its index in `actionResults`. */
  charts: Array<{ action: number; title?: string; svgUrl: string; pngUrl: string }>;
  expiresAt: Date;
}

/**
 * The signed page URL and chart image URLs of an execution (for a chat post, a Teams card's Image
 * elements): absolute, under PUBLIC_URL, valid for the configured lifetime from `now`. The charts are those
 * of the actions whose result has a `chartUrl`.
 */
export function executionLinks(
  settings: LinkSettings,
  execution: { executionId: string; orgId: string; result: PlaybookExecutionResult },
  now: Date = new Date(),
): ExecutionLinks {
  const { executionId, orgId, result } = execution;
  const expiresAt = new Date(now.getTime() + settings.lifetimeSeconds * 1_000);
  const signed = (path: string) => absolute(settings.publicUrl, signPath(settings.secret, { path, orgId, executionId }, expiresAt));
  const charts = (result.actionResults ?? []).flatMap((action, index) =>
    action.chartUrl === undefined
      ? []
      : [
          {
            action: index,
            ...(action.title === undefined ? {} : { title: action.title }),
            svgUrl: signed(signedChartPath(executionId, index, "svg")),
            pngUrl: signed(signedChartPath(executionId, index, "png")),
          },
        ],
  );
  return { pageUrl: signed(pagePath(executionId)), charts, expiresAt };
}
